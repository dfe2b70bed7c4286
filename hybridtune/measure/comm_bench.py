"""Communication microbenchmarks, run as an MPI job of their own on this node.

Ping-pong, allgather, neighbour exchange, barrier and LogGP's parametrised round trips over message
sizes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hybridtune.compiler.build import native_source
from hybridtune.compiler.programs import build_program, omp_environment, run_json
from hybridtune.errors import HybridtuneError
from hybridtune.measure.launch_env import child_environment, nested_mpi_command
from hybridtune.measure.provenance import node_name

PROGRAM = "ht_comm_bench"
KINDS = ("pingpong", "allgather", "neighbour", "barrier", "prtt")
PAIRWISE = ("pingpong", "prtt")


@dataclass(frozen=True)
class Series:
    """Seconds per call: the median and every repetition."""
    median_s: float
    samples_s: tuple[float, ...]


@dataclass(frozen=True)
class MessagePoint:
    """Seconds per call with `bytes` per message (ping-pong: one way, half a round trip; allgather:
    bytes from each rank), the slowest rank's; calls: how many one repetition timed."""
    bytes: int
    median_s: float
    samples_s: tuple[float, ...]
    calls: int


@dataclass(frozen=True)
class PrttPoint:
    """LogGP's parametrised round trips at one size: PRTT(1, 0, s), PRTT(M, 0, s) and
    PRTT(M, d, s) with M messages and the delay d = PRTT(1, 0, s)."""
    bytes: int
    prtt_1: Series
    prtt_n0: Series
    prtt_nd: Series
    messages: int
    delay_s: float


@dataclass(frozen=True)
class CommRun:
    """One benchmark run: its kind, the MPI library that ran it, its ranks, a point per size."""
    kind: str
    library: str
    ranks: int
    points: tuple

    @property
    def provenance(self) -> dict:
        """What a fit to this run is valid for: the MPI library and version, the node and the
        ranks on it (every rank of a nested job runs on this node)."""
        return {"library": library_version(self.library), "nodes": [node_name()],
                "ranks_per_node": self.ranks}


def library_version(text: str) -> str:
    """'MPICH 5.0.2' from MPI_Get_library_version's text, else its first words."""
    found = re.search(r"(MPICH|Open MPI|Intel\(R\) MPI)\D*?(\d+(?:\.\d+)+)", text)
    return f"{found.group(1)} {found.group(2)}" if found else " ".join(text.split()[:3])


def comm_timeout(kind: str, sizes: list[int], reps: int, target_s: float, ranks: int) -> float:
    """A generous limit: 30 s for the start, per size reps + 2 repetitions (three series for
    prtt) of target_s or of moving every rank's message at 100 MB/s, whichever is longer."""
    series = 3 if kind == "prtt" else 1
    return 30.0 + series * sum((reps + 2) * max(target_s, 2 * ranks * size / 1e8) for size in sizes)


def comm_run(kind: str, sizes: list[int], reps: int = 15, target_s: float = 0.01, ranks: int = 2,
             messages: int = 16, timeout_s: float | None = None) -> CommRun:
    """The benchmark `kind` on a `ranks`-rank job started on this node (outside any job this
    process belongs to), one point per size in the order given."""
    if kind not in KINDS:
        raise HybridtuneError(f"communication benchmark {kind!r}: expected one of {', '.join(KINDS)}")
    if not sizes or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in sizes):
        raise HybridtuneError(f"{kind} needs message sizes in bytes >= 0, got {sizes!r}")
    if kind == "barrier" and any(sizes):
        raise HybridtuneError(f"barrier moves no message: sizes must be 0, got {sizes!r}")
    least = 2 if kind in PAIRWISE else 1
    if reps < 1 or ranks < least or not 0 < target_s < 10 or messages < 2:
        raise HybridtuneError(f"{kind} needs reps >= 1, ranks >= {least}, 0 < target_s < 10 and "
                              f"messages >= 2, got {reps}, {ranks}, {target_s}, {messages}")
    program = build_program(PROGRAM, native_source(PROGRAM + ".c"), mpi=True)
    limit = timeout_s if timeout_s is not None else comm_timeout(kind, sizes, reps, target_s, ranks)
    launcher = tuple(nested_mpi_command(ranks, [], cores_per_rank=1))
    args = ["-k", kind, "-r", str(reps), "-t", str(target_s), "-m", str(messages),
            *[str(s) for s in sizes]]
    data = run_json(program, args, 1, limit, launcher, child_environment(omp_environment(1)))
    return parsed_run(data, kind, sizes, reps, ranks)


def pingpong(sizes: list[int], reps: int = 15, target_s: float = 0.01, ranks: int = 2,
             timeout_s: float | None = None) -> CommRun:
    """Ping-pong between ranks 0 and 1: seconds per one-way message of each size."""
    return comm_run("pingpong", sizes, reps, target_s, ranks, timeout_s=timeout_s)


def _series(value: object, reps: int, where: str) -> Series:
    samples = value.get("samples_s") if isinstance(value, dict) else None
    median = value.get("median_s") if isinstance(value, dict) else None
    if not isinstance(samples, list) or len(samples) != reps or not all(
            isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in [*samples, median]):
        raise HybridtuneError(f"{PROGRAM} output: {where} {str(value)[:200]!r} is not {reps} "
                              "positive times")
    return Series(float(median), tuple(float(v) for v in samples))


def parsed_run(data: object, kind: str, sizes: list[int], reps: int, ranks: int) -> CommRun:
    if not isinstance(data, dict) or data.get("ranks") != ranks or data.get("kind") != kind:
        raise HybridtuneError(f"{PROGRAM} output: {str(data)[:200]!r}, expected an object of {kind} "
                              f"on {ranks} ranks")
    raw = data.get("points")
    if not isinstance(raw, list) or len(raw) != len(sizes):
        raise HybridtuneError(f"{PROGRAM} output: key 'points' holds "
                              f"{len(raw) if isinstance(raw, list) else raw!r} points, expected "
                              f"{len(sizes)}")
    points = []
    for size, point in zip(sizes, raw):
        if not isinstance(point, dict) or point.get("bytes") != size:
            raise HybridtuneError(f"{PROGRAM} output: point {str(point)[:200]!r} is not of "
                                  f"{size} bytes")
        where = f"point of {size} bytes"
        if kind == "prtt":
            points.append(PrttPoint(size, *(_series(point.get(k), reps, f"{where}, {k}")
                                            for k in ("prtt_1", "prtt_n0", "prtt_nd")),
                                    int(point.get("messages", 0)), float(point.get("delay_s", 0))))
        else:
            series = _series(point, reps, where)
            points.append(MessagePoint(size, series.median_s, series.samples_s,
                                       int(point.get("calls", 0))))
    return CommRun(kind, str(data.get("library", "")).strip(), ranks, tuple(points))
