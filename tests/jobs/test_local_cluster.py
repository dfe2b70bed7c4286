"""jobs/local-cluster runs a real Slurm: an MPI job spans both emulated nodes, each rank on its
node's own core; start is idempotent and stop leaves no daemon behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

RANK_REPORT = """\
import json, os
from mpi4py import MPI
comm = MPI.COMM_WORLD
print(json.dumps({"rank": comm.Get_rank(), "size": comm.Get_size(),
                  "node": os.environ.get("SLURMD_NODENAME"),
                  "cpus": sorted(os.sched_getaffinity(0))}), flush=True)
"""


def test_mpi_job_spans_both_nodes_on_their_own_cores(local_cluster, tmp_path):
    (tmp_path / "rank.py").write_text(RANK_REPORT)
    batch = tmp_path / "job.sh"
    batch.write_text(textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH -N2 --ntasks-per-node=1 --cpus-per-task=1
        #SBATCH --time=2
        srun --mpi=pmi2 {sys.executable} {tmp_path / 'rank.py'}
        """))
    out = tmp_path / "job.out"
    done = subprocess.run(["sbatch", "--wait", f"--chdir={tmp_path}", f"--output={out}", str(batch)],
                          env=local_cluster.env, capture_output=True, text=True, timeout=180)
    log = out.read_text() if out.exists() else ""
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{log}"
    ranks = sorted((json.loads(line) for line in log.splitlines() if line.startswith("{")),
                   key=lambda r: r["rank"])
    assert [r["rank"] for r in ranks] == [0, 1], log
    assert [r["size"] for r in ranks] == [2, 2], f"not one MPI world of 2:\n{log}"
    assert sorted(r["node"] for r in ranks) == ["n1", "n2"], log
    assert ranks[0]["cpus"] != ranks[1]["cpus"], f"both ranks on the same cores:\n{log}"


def test_status_reports_the_running_cluster(local_cluster):
    done = local_cluster.script("status")
    assert done.returncode == 0, done.stdout
    assert "running from" in done.stdout
    assert "n1" in done.stdout and "n2" in done.stdout and "idle" in done.stdout


def _pid_runs(pid: int) -> bool:
    """The process exists and is no zombie (pid 1 may reap a stopped daemon late)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _processes_naming(folder: Path) -> list[str]:
    """Command lines of running processes that name the folder."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if proc.name.isdigit() and int(proc.name) != os.getpid() and f"{folder}/" in cmd:
            found.append(f"{proc.name}: {cmd}")
    return found


def test_start_is_idempotent_and_stop_leaves_nothing(fresh_cluster):
    cluster = fresh_cluster()
    pids = cluster.pids()
    assert sorted(pids) == ["munged", "slurmctld", "slurmd-n1", "slurmd-n2"]
    assert all(_pid_runs(p) for p in pids.values())

    again = cluster.script("start", "--nodes", "2", "--cores-per-node", "1")
    assert again.returncode == 0, again.stdout
    assert "already running" in again.stdout
    assert cluster.pids() == pids

    stopped = cluster.script("stop")
    assert stopped.returncode == 0, stopped.stdout
    assert [name for name, pid in pids.items() if _pid_runs(pid)] == []
    assert _processes_naming(cluster.dir) == []
    assert cluster.pids() == {}
    assert cluster.script("status").returncode == 3
    twice = cluster.script("stop")
    assert twice.returncode == 0 and "nothing running" in twice.stdout
