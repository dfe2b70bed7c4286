"""A child process's environment and command, kept out of this process's MPI job or Slurm step.

A measuring process may run inside an MPI job (mpiexec or srun). A child that is itself an MPI
program (the cluster-scale variants) would otherwise find the parent's PMI connection and try to
join its job, or, through hydra's Slurm launcher, wait for a step on CPUs the job already holds. So
the child gets an environment without PMI_*, PMIX_*, HYDI_*, HYDRA_*, MPI_LOCAL* and SLURM_*
variables, and an MPI child is started with `mpiexec -launcher fork`, which starts its ranks as
plain local processes: a world of its own, on this node, inside the parent's CPU set.

Under Slurm's PMI (srun --mpi=pmi2) the mpich wheel must not start on its UCX netmod: mpich 5's
UCX start publishes MPID_MAX_BC_SIZE (4096) bytes from the UCX worker address onwards (the address
is a few hundred bytes; the rest is whatever follows it in the heap) in eight PMI-1 puts of 511
bytes, 1022 hex digits each. With the key that makes a request line of up to 1077 bytes, while
Slurm's pmi2 plugin reads a PMI-1 line in at most 1024: whenever the heap behind the address holds
few zero runs (a Python process that imported much before MPI_Init), a put is cut, its tail read
as the next request ("value not properly terminated in client request", "request not begin with
'cmd='") and MPI_Init fails. The OFI netmod's card is 16 bytes, one short put: every process
started under Slurm's PMI gets MPIR_CVAR_CH4_NETMOD=ofi unless the environment names a netmod.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

STRIPPED_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPI_LOCAL", "SLURM_")
MPI_PREFIXES = STRIPPED_PREFIXES[:-1]
NETMOD = "MPIR_CVAR_CH4_NETMOD"
SLURM_PMI_NETMOD = "ofi"     # its card fits one PMI-1 line; UCX's 4 KiB one does not (above)


def under_slurm_pmi(env: Mapping[str, str]) -> bool:
    """This process's MPI world, if it starts one, is wired by Slurm's PMI (srun --mpi=pmi2), not
    by hydra's (mpiexec)."""
    return "PMI_FD" in env and "SLURM_STEP_ID" in env and "HYDI_CONTROL_FD" not in env


def slurm_pmi_netmod(env: Mapping[str, str]) -> dict[str, str]:
    """The variables to add to env before an MPI start under Slurm's PMI: the OFI netmod, unless
    env names one."""
    return {} if NETMOD in env else {NETMOD: SLURM_PMI_NETMOD}


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
    an srun step started inside the job's allocation (whose ranks start under Slurm's PMI, so on
    the netmod slurm_pmi_netmod names)."""
    kept = {k: v for k, v in env.items() if not k.startswith(MPI_PREFIXES)}
    return {**kept, **slurm_pmi_netmod(kept)}


def step_mpi_command(ranks: int, hosts: tuple, cores_per_rank: int, argv: list[str]) -> list[str]:
    """The command that runs argv as an MPI program of `ranks` ranks spread evenly over the named
    nodes of this Slurm allocation: a step of its own beside the job's running one (--overlap),
    rank 0's standard input from this process and its output passed on as it comes (srun holds
    output back to the next newline otherwise, which binary output may never have); run it with
    step_environment. A fork launcher cannot leave its node, so spanning nodes takes a step."""
    return ["srun", "--overlap", "--mpi=pmi2", f"--nodes={len(hosts)}", f"--ntasks={ranks}",
            f"--nodelist={','.join(hosts)}", f"--cpus-per-task={cores_per_rank}", "--input=0",
            "--unbuffered", "--kill-on-bad-exit=1", *argv]
