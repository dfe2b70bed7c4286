"""Machine microbenchmarks: the cost of an OpenMP barrier and streaming bandwidth against footprint."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from hybridtune.compiler.build import native_source
from hybridtune.compiler.programs import build_program, run_json
from hybridtune.errors import HybridtuneError

BARRIER_PROGRAM = "ht_barrier_bench"
STREAM_PROGRAM = "ht_stream_bench"
KERNELS = ("triad", "copy", "sum")
BARRIER_TIMEOUT_S = 30.0
REGIME_TOLERANCE = 0.15


@dataclass(frozen=True)
class BarrierSample:
    """Seconds per `#pragma omp barrier` for a team of `threads`: the median and every repetition."""
    threads: int
    median_s: float
    samples_s: tuple[float, ...]
    barriers_per_sample: int


@dataclass(frozen=True)
class StreamPoint:
    """Bandwidth at one footprint (bytes of all arrays), counted as the curve's `traffic` says."""
    footprint_bytes: int
    bandwidth_Bps: float
    samples_Bps: tuple[float, ...]
    actual_bytes: int
    sweeps: int


@dataclass(frozen=True)
class StreamCurve:
    """Bandwidth against footprint for one kernel and thread count, points in the requested order."""
    threads: int
    kernel: str
    formula: str
    traffic: str
    bytes_per_element: int
    points: tuple[StreamPoint, ...]


def _field(data: dict, key: str, kind: type, name: str):
    value = data.get(key)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise HybridtuneError(f"{name} output: key '{key}' is {value!r}, expected {kind.__name__}")
    return value


def _positive_times(values: object, key: str, name: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not values:
        raise HybridtuneError(f"{name} output: key '{key}' is {values!r}, expected a non-empty list")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
            raise HybridtuneError(f"{name} output: key '{key}' holds {v!r}, expected positive numbers")
        out.append(float(v))
    return tuple(out)


def _check_threads(data: dict, threads: int, name: str) -> None:
    got = _field(data, "threads", int, name)
    if got != threads:
        raise HybridtuneError(f"{name} ran with {got} threads, asked for {threads}")


def barrier_cost(threads: int, reps: int = 15, timeout_s: float = BARRIER_TIMEOUT_S) -> BarrierSample:
    """Seconds per barrier for `threads` threads: median of `reps` timed loops (about 0.5 s a run)."""
    if threads < 1 or reps < 1:
        raise HybridtuneError(f"barrier_cost needs threads >= 1 and reps >= 1, got {threads}, {reps}")
    program = build_program(BARRIER_PROGRAM, native_source(BARRIER_PROGRAM + ".c"))
    data = run_json(program, ["-r", str(reps), str(threads)], threads, timeout_s)
    _check_threads(data, threads, BARRIER_PROGRAM)
    samples = _positive_times(data.get("samples_s"), "samples_s", BARRIER_PROGRAM)
    median = _field(data, "median_s", float, BARRIER_PROGRAM)
    if len(samples) != reps or not (math.isfinite(median) and median > 0):
        raise HybridtuneError(f"{BARRIER_PROGRAM} output: {len(samples)} samples (asked for {reps}), "
                              f"median {median!r}")
    return BarrierSample(threads, median, samples, _field(data, "barriers_per_sample", int,
                                                          BARRIER_PROGRAM))


def barrier_samples(max_threads: int, reps: int = 15) -> list[BarrierSample]:
    """The barrier benchmark for teams of 1..max_threads threads (about 0.5 s each)."""
    if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
        raise HybridtuneError(f"barrier_samples needs max_threads >= 1, got {max_threads!r}")
    return [barrier_cost(p, reps) for p in range(1, max_threads + 1)]


def stream_timeout(footprints: list[int], samples: int) -> float:
    """A generous limit: 30 s plus, per point, samples + 3 runs of 50 ms or 3 s per GB of footprint."""
    return 30.0 + sum(0.05 * (samples + 3) + 3.0 * f / 1e9 * (samples + 3) for f in footprints)


def stream_bandwidth(threads: int, footprints: list[int], kernel: str = "triad", samples: int = 7,
                     timeout_s: float | None = None) -> StreamCurve:
    """Bandwidth (bytes/s, median of `samples`) of `kernel` at each footprint for `threads` threads.

    kernel: triad a[i] = b[i] + s*c[i] (32 B/element), copy a[i] = b[i] (24 B), sum t += b[i] (8 B);
    traffic counts reads + writes + write-allocate for stores. A footprint is the bytes of all the
    kernel's arrays together.
    """
    if kernel not in KERNELS:
        raise HybridtuneError(f"unknown stream kernel '{kernel}', expected one of {', '.join(KERNELS)}")
    if threads < 1 or samples < 1:
        raise HybridtuneError(f"stream_bandwidth needs threads >= 1 and samples >= 1, got {threads}, "
                              f"{samples}")
    if not footprints or any(isinstance(f, bool) or not isinstance(f, int) or f < 1
                             for f in footprints):
        raise HybridtuneError(f"stream_bandwidth needs positive integer footprints, got {footprints!r}")
    program = build_program(STREAM_PROGRAM, native_source(STREAM_PROGRAM + ".c"))
    args = ["-k", kernel, "-n", str(samples), *[str(f) for f in footprints]]
    limit = timeout_s if timeout_s is not None else stream_timeout(footprints, samples)
    data = run_json(program, args, threads, limit)
    name = STREAM_PROGRAM
    _check_threads(data, threads, name)
    if data.get("kernel") != kernel:
        raise HybridtuneError(f"{name} ran kernel {data.get('kernel')!r}, asked for {kernel!r}")
    raw = data.get("points")
    if not isinstance(raw, list) or len(raw) != len(footprints):
        raise HybridtuneError(f"{name} output: {len(raw) if isinstance(raw, list) else raw!r} points, "
                              f"expected {len(footprints)}")
    points = []
    for footprint, point in zip(footprints, raw):
        if not isinstance(point, dict) or point.get("footprint_bytes") != footprint:
            raise HybridtuneError(f"{name} output: point {point!r} does not match footprint {footprint}")
        median = _field(point, "bandwidth_Bps", float, name)
        if not (math.isfinite(median) and median > 0):
            raise HybridtuneError(f"{name} output: bandwidth {median!r} at {footprint} bytes")
        points.append(StreamPoint(footprint, median,
                                  _positive_times(point.get("samples_Bps"), "samples_Bps", name),
                                  _field(point, "actual_bytes", int, name),
                                  _field(point, "sweeps", int, name)))
    return StreamCurve(threads, kernel, _field(data, "formula", str, name),
                       _field(data, "traffic", str, name),
                       _field(data, "bytes_per_element", int, name), tuple(points))


def memory_regime(curve: StreamCurve, tolerance: float = REGIME_TOLERANCE) -> int:
    """The footprint (bytes) where the memory-bound regime starts.

    Walking down from the largest footprint, a point joins the regime while its bandwidth lies
    within `tolerance` (default 15%) of the median of the points already in it; the smallest
    footprint that joined is the start. The largest footprint always anchors the reference, so a
    short curve whose middle points are still in cache cannot pull the reference up to cache
    bandwidth, and once a few points have joined, one noisy sample no longer decides. With a
    single point, that point's footprint.
    """
    if not curve.points:
        raise HybridtuneError("memory_regime needs a stream curve with at least one point")
    ordered = sorted(curve.points, key=lambda p: p.footprint_bytes, reverse=True)
    regime = [ordered[0].bandwidth_Bps]
    start = ordered[0].footprint_bytes
    for point in ordered[1:]:
        reference = statistics.median(regime)
        if abs(point.bandwidth_Bps - reference) > tolerance * reference:
            break
        regime.append(point.bandwidth_Bps)
        start = point.footprint_bytes
    return start
