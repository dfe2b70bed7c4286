"""The environment of a child process that must not join this process's MPI job or Slurm step.

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


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """env without the variables that tie a process to its parent's MPI job or Slurm step."""
    return {k: v for k, v in env.items() if not k.startswith(STRIPPED_PREFIXES)}


def mpiexec_program() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.is_file() else (shutil.which("mpiexec") or "mpiexec")


def nested_mpi_command(ranks: int, argv: list[str]) -> list[str]:
    """The command that runs argv as an MPI program of `ranks` ranks on this node, independent of
    any job this process belongs to (run it with child_environment)."""
    return [mpiexec_program(), "-launcher", "fork", "-n", str(ranks), *argv]
