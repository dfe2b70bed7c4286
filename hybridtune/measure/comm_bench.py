"""Communication microbenchmarks: point-to-point ping-pong between two MPI ranks over message sizes, run as an MPI job of its own on this node."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hybridtune.compiler.build import native_source
from hybridtune.compiler.programs import build_program, omp_environment, run_json
from hybridtune.errors import HybridtuneError
from hybridtune.measure.launch_env import child_environment, nested_mpi_command

PINGPONG_PROGRAM = "ht_pingpong_bench"


@dataclass(frozen=True)
class MessagePoint:
    """Seconds per one-way message of `bytes` (half a round trip): the median and every repetition."""
    bytes: int
    median_s: float
    samples_s: tuple[float, ...]
    round_trips: int


@dataclass(frozen=True)
class PingPong:
    """One ping-pong run: the MPI library that ran it, its ranks, and a point per message size."""
    library: str
    ranks: int
    points: tuple[MessagePoint, ...]


def pingpong_timeout(sizes: list[int], reps: int, target_s: float) -> float:
    """A generous limit: 30 s for the start, per size reps + 2 repetitions of target_s or of
    moving the message at 100 MB/s, whichever is longer."""
    return 30.0 + sum((reps + 2) * max(target_s, 2 * size / 1e8) for size in sizes)


def pingpong(sizes: list[int], reps: int = 15, target_s: float = 0.01, ranks: int = 2,
             timeout_s: float | None = None) -> PingPong:
    """Ping-pong between ranks 0 and 1 of a `ranks`-rank job started on this node (outside any
    job this process belongs to), one point per size in the order given."""
    if not sizes or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in sizes):
        raise HybridtuneError(f"pingpong needs message sizes in bytes >= 0, got {sizes!r}")
    if reps < 1 or ranks < 2 or not 0 < target_s < 10:
        raise HybridtuneError(f"pingpong needs reps >= 1, ranks >= 2 and 0 < target_s < 10, got "
                              f"{reps}, {ranks}, {target_s}")
    program = build_program(PINGPONG_PROGRAM, native_source(PINGPONG_PROGRAM + ".c"), mpi=True)
    limit = timeout_s if timeout_s is not None else pingpong_timeout(sizes, reps, target_s)
    launcher = tuple(nested_mpi_command(ranks, []))
    data = run_json(program, ["-r", str(reps), "-t", str(target_s), *[str(s) for s in sizes]], 1,
                    limit, launcher, child_environment(omp_environment(1)))
    return _parsed(data, sizes, reps, ranks)


def _parsed(data: object, sizes: list[int], reps: int, ranks: int) -> PingPong:
    name = PINGPONG_PROGRAM
    if not isinstance(data, dict) or data.get("ranks") != ranks:
        raise HybridtuneError(f"{name} output: {str(data)[:200]!r}, expected an object of {ranks} ranks")
    raw = data.get("points")
    if not isinstance(raw, list) or len(raw) != len(sizes):
        raise HybridtuneError(f"{name} output: key 'points' holds {len(raw) if isinstance(raw, list) else raw!r}"
                              f" points, expected {len(sizes)}")
    points = []
    for size, point in zip(sizes, raw):
        samples = point.get("samples_s") if isinstance(point, dict) else None
        median = point.get("median_s") if isinstance(point, dict) else None
        if (point.get("bytes") if isinstance(point, dict) else None) != size \
                or not isinstance(samples, list) or len(samples) != reps \
                or not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0
                           for v in [*samples, median]):
            raise HybridtuneError(f"{name} output: point {str(point)[:200]!r} is not {reps} positive "
                                  f"times of {size} bytes")
        points.append(MessagePoint(size, float(median), tuple(float(v) for v in samples),
                                   int(point.get("round_trips", 0))))
    return PingPong(str(data.get("library", "")).strip(), ranks, tuple(points))
