"""MPI started under Slurm's PMI (srun --mpi=pmi2) with the mpich wheel: a tune rank whose heap is full of dense bytes still joins its world, and a step across nodes starts on the netmod whose address card fits a PMI-1 line."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.measure.launch_env import NETMOD, SLURM_PMI_NETMOD, step_environment
from tune_support import BIN

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

# mpich's UCX start publishes 4096 bytes from the UCX worker address onwards, whatever follows it in
# the heap, in PMI-1 puts of 1022 hex digits; Slurm reads a PMI-1 line in at most 1024 bytes. Live
# blocks of dense bytes between holes of every size put such bytes behind wherever MPI_Init
# allocates (a tune rank has imported most of the project by then: its heap is dense as well).
DENSE_HEAP = textwrap.dedent("""\
    keep, holes = [], []
    for _ in range(4):
        for size in range(520, 5000, 24):
            holes.append(bytes([0x5a]) * size)
            keep.append(bytes([0x5a]) * 4200)
    del holes
    """)
TUNE_RANK = "from hybridtune.runtime.launch import discover\n" + DENSE_HEAP + textwrap.dedent("""\
    launch = discover()
    print(f"rank {launch.rank} of {launch.size} ({launch.launcher})", flush=True)
    """)
STEP_RANK = "import os\n" + DENSE_HEAP + textwrap.dedent(f"""\
    from mpi4py import MPI
    print(MPI.COMM_WORLD.Get_size(), os.environ.get("{NETMOD}"), flush=True)
    """)


def srun(env, script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["srun", "--mpi=pmi2", "-N2", "-n2", "--time=2", "--kill-on-bad-exit=1",
                           str(BIN / "python"), "-c", script],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=180)


def test_a_tune_rank_with_a_dense_heap_joins_its_world_under_slurm_pmi(local_cluster):
    done = srun(local_cluster.env, TUNE_RANK)
    output = f"{done.stdout}{done.stderr}"
    assert "not properly terminated" not in output and "MPI_Init" not in output, output
    assert done.returncode == 0, output
    assert sorted(done.stdout.splitlines()) == ["rank 0 of 2 (srun)", "rank 1 of 2 (srun)"], \
        output


def test_a_step_across_nodes_starts_on_the_netmod_whose_card_fits_a_pmi_line(local_cluster):
    # the runner starts a step across nodes with step_environment; a netmod the user named stays
    assert step_environment({**local_cluster.env, NETMOD: "ucx"})[NETMOD] == "ucx"
    done = srun(step_environment(local_cluster.env), STEP_RANK)
    output = f"{done.stdout}{done.stderr}"
    assert "not properly terminated" not in output, output
    assert done.returncode == 0, output
    assert done.stdout.splitlines() == [f"2 {SLURM_PMI_NETMOD}"] * 2, output
