"""Who runs this tune: one process, or the ranks of an MPI job (mpiexec or srun) grouped into nodes.

Ranks are grouped by node name (SLURMD_NODENAME, else the hostname): emulated Slurm nodes share a
hostname and memory, so a shared-memory split would merge them. A node's cores are the union of its
ranks' affinity masks. mpi4py is imported only when an MPI launcher started this process.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass

from hybridtune.errors import RequestError
from hybridtune.measure.launch_env import slurm_pmi_netmod, under_slurm_pmi
from hybridtune.measure.provenance import hardware_identity, node_name

MPI_MARKERS = ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMIX_RANK", "HYDI_CONTROL_FD",
               "OMPI_COMM_WORLD_SIZE")
POLL_S = 0.01       # a waiting rank sleeps between non-blocking probes: mpich's blocking calls spin
FIRST_POLL_S = 0.0002   # right after a message the next one is likely soon: sleep less, then more
TAG_HELLO = 11


class LaunchError(RequestError):
    """The MPI set-up is wrong (for instance srun without PMI): every rank would run alone."""


@dataclass(frozen=True)
class JobNode:
    name: str
    ranks: tuple            # world ranks on this node; the first one measures
    cores: tuple            # union of the ranks' affinity masks
    hardware_id: str


@dataclass(frozen=True)
class Launch:
    launcher: str           # direct, mpiexec or srun
    rank: int
    size: int
    nodes: tuple            # JobNode, rank 0's node first (known on rank 0 only)
    comm: object = None     # the MPI communicator, None when direct
    mpi: object = None      # mpi4py's MPI module, initialised; None when direct


def step_tasks(env=os.environ) -> int:
    """Tasks of the Slurm step this process belongs to (1 outside a step)."""
    value = env.get("SLURM_STEP_NUM_TASKS") or (env.get("SLURM_NTASKS") if env.get("SLURM_STEP_ID")
                                                 not in (None, "batch", "extern") else None)
    return int(value) if value and value.isdigit() else 1


def launcher_name(env=os.environ) -> str:
    if any(marker in env for marker in MPI_MARKERS):
        return "srun" if "SLURM_STEP_ID" in env and "HYDI_CONTROL_FD" not in env else "mpiexec"
    return "srun" if step_tasks(env) > 1 else "direct"


def _own_facts() -> tuple:
    return node_name(), tuple(sorted(os.sched_getaffinity(0))), hardware_identity()["hardware_id"]


def _group(facts: list[tuple]) -> tuple:
    by_name: dict[str, list] = {}
    for rank, (name, cores, hardware) in enumerate(facts):
        by_name.setdefault(name, []).append((rank, cores, hardware))
    return tuple(JobNode(name, tuple(r for r, _, _ in members),
                      tuple(sorted({c for _, cores, _ in members for c in cores})), members[0][2])
                 for name, members in by_name.items())


class Backoff:
    """Sleeps between polls: short right after activity, doubling up to POLL_S while idle, so a
    busy scheduler answers within a millisecond and an idle rank uses about 1% of a core."""

    def __init__(self):
        self.delay = FIRST_POLL_S

    def active(self) -> None:
        self.delay = FIRST_POLL_S

    def sleep(self, wake: threading.Event | None = None) -> None:
        """Sleep the current delay (or until wake is set), then double it."""
        if wake is None:
            time.sleep(self.delay)
        elif wake.wait(self.delay):
            wake.clear()
            self.delay = FIRST_POLL_S
            return
        self.delay = min(POLL_S, 2 * self.delay)


def wait_for(request) -> None:
    """Complete a non-blocking MPI request without spinning a core."""
    backoff = Backoff()
    while not request.Test():
        backoff.sleep()


def discover() -> Launch:
    """This process's place in the job; rank 0 learns every rank's node, cores and hardware."""
    launcher = launcher_name()
    if launcher == "direct":
        name, cores, hardware = _own_facts()
        return Launch("direct", 0, 1, (JobNode(name, (0,), cores, hardware),))
    MPI = _start_mpi()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size == 1 and step_tasks() > 1:
        raise LaunchError(
            f"this Slurm step has {step_tasks()} tasks but MPI gave this rank a world of one: "
            "srun did not connect the ranks; launch with `srun --mpi=pmi2 ...` (the mpich wheel "
            "speaks PMI-2, not PMIx)")
    facts = _own_facts()
    if rank != 0:
        wait_for(comm.isend(facts, dest=0, tag=TAG_HELLO))
        return Launch(launcher, rank, size, (), comm, MPI)
    gathered = {0: facts}
    while len(gathered) < size:
        status = MPI.Status()
        if comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG_HELLO, status=status):
            gathered[status.Get_source()] = comm.recv(source=status.Get_source(), tag=TAG_HELLO)
        else:
            time.sleep(POLL_S)
    return Launch(launcher, 0, size, _group([gathered[r] for r in range(size)]), comm, MPI)


def _start_mpi():
    """mpi4py's MPI, initialised; under Slurm's PMI on the netmod whose address card fits a PMI-1
    line (launch_env), set for MPI_Init only, so that programs this process starts later (a
    nested mpiexec) get the environment it was given."""
    added = slurm_pmi_netmod(os.environ) if under_slurm_pmi(os.environ) else {}
    os.environ.update(added)
    try:
        from mpi4py import MPI      # importing it initialises MPI: only under an MPI launcher
    finally:
        for name in added:
            os.environ.pop(name, None)
    return MPI


def parse_slurm_duration(text: str) -> float | None:
    """Seconds of a Slurm duration ([D-]HH:MM:SS, MM:SS, M); None for UNLIMITED or garbage."""
    days, _, clock = text.strip().rpartition("-")
    parts = clock.split(":")
    if not all(part.isdigit() for part in parts) or not 1 <= len(parts) <= 3 or \
            days and not days.isdigit():
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    if len(parts) == 1:
        seconds *= 60
    return float(seconds + 86400 * int(days or 0))


def slurm_time_left() -> float | None:
    """Seconds left of this Slurm job (squeue's %L), None outside a job or without a limit."""
    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        return None
    if os.environ.get("SLURM_ARRAY_TASK_ID"):       # -j of an array's first id lists every task
        job = f"{os.environ.get('SLURM_ARRAY_JOB_ID', job)}_{os.environ['SLURM_ARRAY_TASK_ID']}"
    try:
        result = subprocess.run(["squeue", "-h", "-j", job, "-o", "%L"], capture_output=True,
                                text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = result.stdout.split()
    return parse_slurm_duration(lines[0]) if result.returncode == 0 and lines else None
