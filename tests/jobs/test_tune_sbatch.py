"""jobs/tune.sbatch on the local Slurm cluster: one tune across two emulated nodes, every task once; srun without PMI is refused."""

from __future__ import annotations

import json
import subprocess
import textwrap
import time

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from tune_support import BIN, TUNE_SCENARIO, first_timings, measurement_rows

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]


def sbatch(cluster, script, log, *args: str) -> subprocess.CompletedProcess:
    env = {**cluster.env, "HYBRIDTUNE": str(BIN / "hybridtune")}
    return subprocess.run(["sbatch", "--wait", f"--output={log}", str(script), *args],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_tune_sbatch_spreads_the_shortlist_over_both_nodes(local_cluster, tune_store, tmp_path):
    log = tmp_path / "tune.log"
    done = sbatch(local_cluster, PROJECT_ROOT / "jobs" / "tune.sbatch", log, TUNE_SCENARIO,
                  "--db", str(tune_store), "--json")
    text = log.read_text() if log.exists() else ""
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{text}"
    assert "srun: 2 rank(s) on 2 node(s): n1 (1 cores, ranks 0), n2 (1 cores, ranks 1)" in text
    result = json.loads(text[text.index("{\n"):text.rindex("}") + 1])
    [record] = result["configurations"]
    rows = measurement_rows(tune_store)
    assert first_timings(rows) == {v: 1 for v in record["shortlisted"]}   # every task ran once
    assert {row["node"] for row in rows} == {"n1", "n2"}
    chosen = [row for row in rows if row["id"] == record["chosen"]["id"]]
    assert chosen and all(row["status"] == "ok" for row in chosen)


def test_scancel_with_term_ends_the_job_without_a_traceback_and_a_rerun_continues(
        local_cluster, tune_store, tmp_path):
    log = tmp_path / "tune.log"
    env = {**local_cluster.env, "HYBRIDTUNE": str(BIN / "hybridtune")}
    submitted = subprocess.run(["sbatch", "--parsable", f"--output={log}",
                                str(PROJECT_ROOT / "jobs" / "tune.sbatch"), TUNE_SCENARIO, "--db",
                                str(tune_store), "--budget", "2", "--ci", "1e-6"],
                               cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                               timeout=60)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 300
    while not measurement_rows_or_none(tune_store) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert measurement_rows_or_none(tune_store), log.read_text() if log.exists() else "no log"
    subprocess.run(["scancel", "--signal=TERM", job], env=env, check=True, timeout=30)
    while time.monotonic() < deadline:
        state = subprocess.run(["squeue", "-h", "-j", job], env=env, capture_output=True,
                               text=True).stdout.strip()
        if not state:
            break
        time.sleep(0.5)
    text = log.read_text()
    assert "stopped by SIGTERM" in text, text
    assert "Traceback" not in text and "Exception ignored" not in text, text
    done = sbatch(local_cluster, PROJECT_ROOT / "jobs" / "tune.sbatch", tmp_path / "again.log",
                  TUNE_SCENARIO, "--db", str(tune_store), "--json")
    again = (tmp_path / "again.log").read_text()
    assert done.returncode == 0, again
    result = json.loads(again[again.index("{\n"):again.rindex("}") + 1])
    [record] = result["configurations"]
    assert first_timings(measurement_rows(tune_store)) == {v: 1 for v in record["shortlisted"]}


def measurement_rows_or_none(store) -> list:
    try:
        return measurement_rows(store)
    except Exception:       # the job's writer holds the store: look again later
        return []


def test_srun_without_pmi_is_refused_by_rank_0_alone(local_cluster, tune_store, tmp_path):
    batch = tmp_path / "nopmi.sh"
    batch.write_text(textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH -N2 --ntasks-per-node=1 --cpus-per-task=1 --time=5
        srun --mpi=none {BIN / 'hybridtune'} tune {TUNE_SCENARIO} --db {tune_store}
        """))
    log = tmp_path / "nopmi.log"
    done = sbatch(local_cluster, batch, log)
    text = log.read_text()
    assert done.returncode != 0
    ours = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(ours) == 1 and "srun --mpi=pmi2" in ours[0], text


def test_runall_sbatch_shards_the_pool_over_an_array_and_merges(local_cluster, tmp_path):
    out = tmp_path / "runall"
    env = {**local_cluster.env, "HYBRIDTUNE": str(BIN / "hybridtune"), "RUNALL_DIR": str(out)}
    done = subprocess.run(["sbatch", "--wait", "--array=0-1", f"--output={tmp_path}/ra-%a.log",
                           str(PROJECT_ROOT / "jobs" / "runall.sbatch"), TUNE_SCENARIO,
                           "--budget", "0.1"],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=900)
    logs = "".join(log.read_text() for log in sorted(tmp_path.glob("ra-*.log")))
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{logs}"
    merged = out / "merged.h5"
    assert merged.exists(), logs
    shards = [first_timings(measurement_rows(out / f"shard-{i}-of-2.h5")) for i in (0, 1)]
    assert shards[0] and shards[1] and not set(shards[0]) & set(shards[1])
    assert first_timings(measurement_rows(merged)) == {v: 1 for s in shards for v in s}
    assert len(shards[0]) + len(shards[1]) == 32          # the whole pool of skeleton F


MPI_SCENARIO = str(PROJECT_ROOT / "tests" / "data" / "tune" / "mpi.scenario.yaml")


def test_a_two_rank_layout_holds_both_nodes_and_runs_its_ranks_across_them(
        local_cluster, tune_store, tmp_path):
    # each emulated node has one core: a measurement of 2 ranks x 1 thread is a step across both
    log = tmp_path / "tune.log"
    done = sbatch(local_cluster, PROJECT_ROOT / "jobs" / "tune.sbatch", log, MPI_SCENARIO,
                  "--db", str(tune_store), "--json", "--budget", "0.3")
    text = log.read_text() if log.exists() else ""
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{text}"
    assert "2 ranks x 1 threads: each measurement holds 2 whole nodes" in text
    result = json.loads(text[text.index("{\n"):text.rindex("}") + 1])
    [record] = result["configurations"]
    rows = [row for row in measurement_rows(tune_store) if row["ranks"] == 2]
    assert first_timings(rows) == {v: 1 for v in record["shortlisted"]}
    assert {(row["nodes"], row["node"], row["status"]) for row in rows} == {(2, "n1,n2", "ok")}
    assert all(row["median_s"] > 0 for row in rows)
    assert all(row["check_error"] <= 1e-10 for row in rows if row["timing"] == "alone")
