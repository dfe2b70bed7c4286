"""tune under mpiexec (the mpich wheel): 2 and 3 ranks, two emulated nodes, SIGTERM, a killed rank, idle ranks' CPU, a nested MPI child."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tune_support import (BIN, clean_env, failing_scenario, first_timings, measurement_rows, run,
                          tune_command, wait_for_rows)

pytestmark = [pytest.mark.mpi, pytest.mark.slow]


def tune_ranks(pid: int) -> list:
    """The hybridtune processes under pid (others come and go: builds, runners)."""
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "hybridtune" in " ".join(child.cmdline()) and child.name() != "mpiexec":
                found.append((child, child.environ()))
        except psutil.Error:
            continue
    return found


def two_nodes(store, *extra: str) -> list[str]:
    """mpiexec with two ranks that name different nodes and hold one core each, as two emulated
    Slurm nodes do."""
    command = tune_command(store, *extra)
    return [str(BIN / "mpiexec"), "-n", "1", "-env", "SLURMD_NODENAME", "node-a", "taskset", "-c",
            "0", *command, ":", "-n", "1", "-env", "SLURMD_NODENAME", "node-b", "taskset", "-c",
            "1", *command]


@pytest.mark.parametrize("ranks", [2, 3])
def test_mpiexec_tunes_with_every_variant_measured_once(tune_store, ranks):
    done = run(tune_command(tune_store, "--json", ranks=ranks))
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["configurations"]    # rank 0 alone prints
    assert record["measured_now"] == 6 and record["chosen"]["id"] in record["shortlisted"]
    assert f"mpiexec: {ranks} rank(s) on 1 node(s)" in done.stderr
    assert first_timings(measurement_rows(tune_store)) == {v: 1 for v in record["shortlisted"]}


def test_two_emulated_nodes_share_the_work_and_a_rerun_reuses_both(tune_store):
    done = run(two_nodes(tune_store, "--json"))
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["configurations"]
    rows = measurement_rows(tune_store)
    assert {row["node"] for row in rows} == {"node-a", "node-b"}
    assert first_timings(rows) == {v: 1 for v in record["shortlisted"]}
    assert record["chosen"] is not None
    again = run(tune_command(tune_store, "--json"))      # directly, on this machine's name
    [second] = json.loads(again.stdout)["configurations"]
    assert again.returncode == 0 and second["measured_now"] == 0


def test_sigterm_under_mpiexec_ends_every_rank_within_seconds(tune_store):
    process = subprocess.Popen(two_nodes(tune_store, "--budget", "2", "--ci", "1e-6"),
                               env=clean_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_rows(tune_store, process, 1)
    ranks = [rank for rank, _ in tune_ranks(process.pid)]
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=60)
    assert time.monotonic() - sent < 15 and code != 0
    gone, alive = psutil.wait_procs(ranks, timeout=10)
    assert not alive
    assert measurement_rows(tune_store)


def test_a_killed_rank_ends_the_job_and_a_rerun_measures_only_what_is_missing(tune_store):
    process = subprocess.Popen(two_nodes(tune_store, "--budget", "1", "--ci", "1e-6"),
                               env=clean_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_rows(tune_store, process, 1)
    workers = [rank for rank, env in tune_ranks(process.pid)
               if env.get("SLURMD_NODENAME") == "node-b"]
    assert workers
    workers[0].kill()
    code = process.wait(timeout=60)
    assert code != 0
    before = first_timings(measurement_rows(tune_store))
    assert set(before.values()) == {1}
    done = run(tune_command(tune_store, "--json"))
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["configurations"]
    assert record["measured_now"] == 6 - len(before)
    assert first_timings(measurement_rows(tune_store)) == {v: 1 for v in record["shortlisted"]}


def test_a_waiting_rank_uses_a_few_percent_of_a_core(tune_store):
    """Two ranks on one node: rank 1 only waits (Iprobe and sleeps), its CPU share stays small."""
    process = subprocess.Popen(tune_command(tune_store, "--budget", "2", "--ci", "1e-6",
                                            ranks=2), env=clean_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    wait_for_rows(tune_store, process, 1)
    waiting = [rank for rank, env in tune_ranks(process.pid) if env.get("PMI_RANK") == "1"]
    assert len(waiting) == 1
    before, started = sum(waiting[0].cpu_times()[:2]), time.monotonic()
    time.sleep(3)
    share = (sum(waiting[0].cpu_times()[:2]) - before) / (time.monotonic() - started)
    still_running = process.poll() is None
    process.send_signal(signal.SIGTERM)      # the rest of the run is not this test's concern
    process.wait(timeout=60)
    assert still_running and share < 0.05, share


def test_a_measuring_rank_starts_a_nested_mpi_program_of_its_own():
    """A child that is itself an MPI program, started from inside an MPI job, gets a world of its
    own: child_environment strips the parent's PMI and Slurm variables, mpiexec -launcher fork
    starts its ranks locally."""
    parent = (
        "import json, os, re, subprocess, sys\n"
        "from mpi4py import MPI\n"
        "from hybridtune.measure.launch_env import child_environment, nested_mpi_command\n"
        "child = 'from mpi4py import MPI; print(f\"world={MPI.COMM_WORLD.Get_size()};\")'\n"
        "if MPI.COMM_WORLD.Get_rank() == 0:\n"
        "    out = subprocess.run(nested_mpi_command(2, [sys.executable, '-c', child]),\n"
        "                         env=child_environment(os.environ), capture_output=True,\n"
        "                         text=True, timeout=60)\n"
        "    print(json.dumps({'parent': MPI.COMM_WORLD.Get_size(), 'code': out.returncode,\n"
        "                      'child': re.findall(r'world=(\\d+);', out.stdout)}))\n")
    done = subprocess.run([str(BIN / "mpiexec"), "-n", "2", sys.executable, "-c", parent],
                          capture_output=True, text=True, timeout=120, env=clean_env())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"parent": 2, "code": 0, "child": ["2", "2"]}



def test_exit_code_4_is_every_ranks_code(tmp_path):
    scenario = failing_scenario(tmp_path)
    tune = (f"{BIN / 'hybridtune'} tune {scenario} --db {tmp_path / 's.h5'} --strategy top_k:3 "
            "--budget 0.1")
    done = run([str(BIN / "mpiexec"), "-n", "2", "sh", "-c",
                f'{tune}; echo "rank $PMI_RANK exit $?"'])
    assert sorted(re.findall(r"^rank (\d) exit (\d+)$", done.stdout, re.MULTILINE)) == [
        ("0", "4"), ("1", "4")], done.stdout + done.stderr
    assert "1 of 1 configurations have no measured choice" in done.stdout
