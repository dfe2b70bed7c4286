"""The environment and command of a child process that must not join this process's MPI job or Slurm step.

A measuring process may run inside an MPI job (mpiexec or srun). A child that is itself an MPI
program (the cluster-scale variants) would otherwise find the parent's PMI connection and try to
join its job, or, through hydra's Slurm launcher, wait for a step on CPUs the job already holds. So
the child gets an environment without PMI_*, PMIX_*, HYDI_*, HYDRA_*, MPI_LOCAL* and SLURM_*
variables, and an MPI child is started with `mpiexec -launcher fork`, which starts its ranks as
plain local processes: a world of its own, on this node, inside the parent's CPU set.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

STRIPPED_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPI_LOCAL", "SLURM_")
MPI_PREFIXES = STRIPPED_PREFIXES[:-1]


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """env without the variables that tie a process to its parent's MPI job or Slurm step."""
    return {k: v for k, v in env.items() if not k.startswith(STRIPPED_PREFIXES)}


def mpiexec_program() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.is_file() else (shutil.which("mpiexec") or "mpiexec")


def nested_mpi_command(ranks: int, argv: list[str], cores_per_rank: int | None = None
                       ) -> list[str]:
    """The command that runs argv as an MPI program of `ranks` ranks on this node, independent of
    any job this process belongs to (run it with child_environment); with cores_per_rank, each
    rank bound to that many cores of its own."""
    binding = ["-bind-to", f"core:{cores_per_rank}"] if cores_per_rank else []
    return [mpiexec_program(), "-launcher", "fork", *binding, "-n", str(ranks), *argv]


def step_environment(env: Mapping[str, str]) -> dict[str, str]:
    """env without the variables of this process's MPI world, keeping Slurm's: the environment of
    an srun step started inside the job's allocation."""
    return {k: v for k, v in env.items() if not k.startswith(MPI_PREFIXES)}


def step_mpi_command(ranks: int, hosts: tuple, cores_per_rank: int, argv: list[str]) -> list[str]:
    """The command that runs argv as an MPI program of `ranks` ranks spread evenly over the named
    nodes of this Slurm allocation: a step of its own beside the job's running one (--overlap),
    rank 0's standard input from this process and its output passed on as it comes (srun holds
    output back to the next newline otherwise, which binary output may never have); run it with
    step_environment. A fork launcher cannot leave its node, so spanning nodes takes a step."""
    return ["srun", "--overlap", "--mpi=pmi2", f"--nodes={len(hosts)}", f"--ntasks={ranks}",
            f"--nodelist={','.join(hosts)}", f"--cpus-per-task={cores_per_rank}", "--input=0",
            "--unbuffered", "--kill-on-bad-exit=1", *argv]
