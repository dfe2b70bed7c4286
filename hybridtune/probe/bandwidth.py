"""Bandwidth benchmarks of the probe: kerncraft's kernels timed per footprint and core count.

Timed by native/ht_probe_bench; footprints per memory level, the last level found where it holds
data.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

from hybridtune.compiler.build import native_source
from hybridtune.compiler.programs import build_program, run_json
from hybridtune.errors import HybridtuneError
from hybridtune.probe.host_facts import CacheFacts, HostFacts

PROBE_PROGRAM = "ht_probe_bench"
LEVEL_SHARE = 0.5          # a cache level's footprint: this share of the capacity the cores use
SURPASS = 1.5              # ... and at least this multiple of the level below
MEMORY_FACTOR = 4          # the memory footprint: this multiple of the last level cache
MEMORY_SHARE_LIMIT = 0.25  # ... but at most this share of the available memory
LIKE_MEMORY = 1.15         # a cache level this close to memory bandwidth behaves like memory
PLATEAU = 0.8              # a footprint this close to a level's best bandwidth still lies in it


@dataclass(frozen=True)
class BenchKernel:
    """One of kerncraft's benchmark kernels with its streams as machine files list them."""
    name: str
    formula: str
    read_streams: int
    read_write_streams: int
    write_streams: int
    flops: int


BENCH_KERNELS = (
    BenchKernel("copy", "a[i] = b[i]", 1, 0, 1, 0),
    BenchKernel("daxpy", "a[i] = a[i] + s*b[i]", 2, 1, 1, 2),
    BenchKernel("load", "t += a[i]", 1, 0, 0, 0),
    BenchKernel("triad", "a[i] = b[i] + c[i]*d[i]", 3, 0, 1, 2),
    BenchKernel("update", "a[i] = s*a[i]", 1, 1, 1, 0),
)


@dataclass(frozen=True)
class BandwidthPoint:
    """Bandwidth at one total footprint, in read-stream plus write-stream bytes per second."""
    footprint_bytes: int
    bandwidth_Bps: float
    samples_Bps: tuple


BandwidthBenchmark = Callable[[str, int, list], list]
"""(kernel name, threads, footprints in bytes) -> one BandwidthPoint per footprint, in order."""



def measure_bandwidth(kernel: str, threads: int, footprints: list, samples: int = 5,
                      min_seconds: float = 0.02) -> list:
    """Run native/ht_probe_bench for one kernel and thread count: one BandwidthPoint per footprint."""
    names = [k.name for k in BENCH_KERNELS]
    if kernel not in names:
        raise HybridtuneError(f"unknown probe kernel '{kernel}', expected one of {', '.join(names)}")
    if threads < 1 or samples < 1 or not (0 < min_seconds <= 10) or not footprints:
        raise HybridtuneError(f"measure_bandwidth needs threads >= 1, samples >= 1, 0 < min_seconds "
                              f"<= 10 and footprints, got {threads}, {samples}, {min_seconds}, "
                              f"{footprints!r}")
    program = build_program(PROBE_PROGRAM, native_source(PROBE_PROGRAM + ".c"))
    limit = 30.0 + sum((samples + 4) * (min_seconds + 3.0 * f / 1e9) for f in footprints)
    data = run_json(program, ["-k", kernel, "-n", str(samples), "-m", f"{min_seconds:g}",
                              *[str(int(f)) for f in footprints]], threads, limit)
    raw = data.get("points")
    if data.get("threads") != threads or data.get("kernel") != kernel or not isinstance(raw, list) \
            or len(raw) != len(footprints):
        raise HybridtuneError(f"{PROBE_PROGRAM} output does not match the request ({kernel}, "
                              f"{threads} threads, {len(footprints)} footprints): {str(data)[:300]}")
    points = []
    for footprint, point in zip(footprints, raw):
        values = point.get("samples_Bps") if isinstance(point, dict) else None
        if not isinstance(values, list) or not values or not all(
                isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values):
            raise HybridtuneError(f"{PROBE_PROGRAM} output: bad samples at {footprint} bytes: "
                                  f"{point!r}")
        points.append(BandwidthPoint(int(footprint), float(point["bandwidth_Bps"]),
                                     tuple(float(v) for v in values)))
    return points


def _used_capacity(cache: CacheFacts, cores: int) -> int:
    """The bytes of this level that `cores` compactly placed cores can use together."""
    return cache.size_bytes * math.ceil(cores / cache.cores_per_group)


def level_footprints(facts: HostFacts, cores: list) -> tuple[dict, list]:
    """Total footprint per memory level and core count, and notes on the choices that needed care."""
    notes = []
    plan = {}
    previous = None
    for cache in facts.caches:
        sizes = []
        for c in cores:
            capacity = _used_capacity(cache, c)
            size = LEVEL_SHARE * capacity
            below = _used_capacity(previous, c) if previous else 0
            if size < SURPASS * below:
                size = (below + capacity) / 2
                notes.append(f"L{cache.level} footprint at {c} cores set midway between L"
                             f"{previous.level} and L{cache.level} capacity")
            sizes.append(int(size))
        plan[f"L{cache.level}"] = sizes
        previous = cache
    last = facts.caches[-1]
    memory = MEMORY_FACTOR * last.size_bytes * last.groups // facts.sockets
    limit = int(MEMORY_SHARE_LIMIT * facts.available_memory_bytes)
    if limit and memory > limit:
        notes.append(f"memory footprint capped at a quarter of the available memory ({limit} bytes) "
                     f"instead of {MEMORY_FACTOR}x the last level cache ({memory} bytes)")
        memory = limit
    plan["MEM"] = [int(memory)] * len(cores)
    return plan, notes


def _best(point: BandwidthPoint) -> float:
    return max(point.samples_Bps)


def last_level_regime(benchmark: BandwidthBenchmark, facts: HostFacts, plan: dict) -> tuple[dict, list]:
    """The plan with the last cache level's footprints moved to where it measurably holds data.

    A virtual machine may report the host's whole last level cache; a footprint of half of it can
    then stream from memory, and an upstream throughput taken from it counts the memory time twice
    (once as that level's transfer, once as the memory bandwidth). When the planned footprint loads
    no faster than memory, footprints doubling from above the level below are tried and the largest
    within PLATEAU of the fastest of them is used, if that one is clearly faster than memory.
    """
    if len(facts.caches) < 2:
        return plan, []
    last, below = f"L{facts.caches[-1].level}", facts.caches[-2]
    planned, memory_footprint = plan[last][0], plan["MEM"][0]
    level, memory = (_best(p) for p in _points(benchmark, "load", 1, [planned, memory_footprint]))
    if level >= LIKE_MEMORY * memory:
        return plan, []
    candidates, size = [], int(SURPASS * _used_capacity(below, 1))
    while size < planned:
        candidates.append(size)
        size *= 2
    points = _points(benchmark, "load", 1, candidates) if candidates else []
    fastest = max((_best(p) for p in points), default=0.0)
    head = (f"{last} at the planned {byte_text(planned)} loaded {gb_s(level)}, like memory "
            f"({gb_s(memory)})")
    if fastest < LIKE_MEMORY * memory:
        return plan, [f"{head}; no footprint from {byte_text(candidates[0] if candidates else planned)} "
                      "up was clearly faster: the planned footprint stays"]
    chosen = max(p.footprint_bytes for p in points if _best(p) >= PLATEAU * fastest)
    changed = dict(plan)
    changed[last] = [int(s * chosen / planned) for s in plan[last]]
    tried = ", ".join(f"{byte_text(p.footprint_bytes)} {_best(p) / 1e9:.1f}" for p in points)
    return changed, [f"{head}; measured {last} at {byte_text(chosen)} instead, the largest footprint "
                     f"within {PLATEAU:g} of the fastest (1-core load GB/s: {tried})"]


def gb_s(bps: float) -> str:
    return f"{bps / 1e9:.3f} GB/s"


def byte_text(value: float) -> str:
    """A byte count as kerncraft's prefixed units read it (decimal prefixes, exact where it can)."""
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            text = f"{value / scale:.6f}".rstrip("0").rstrip(".")
            return f"{text} {prefix}B"
    return f"{value:.2f} B"


def _points(benchmark: BandwidthBenchmark, kernel: str, cores: int, footprints: list) -> list:
    points = list(benchmark(kernel, cores, footprints))
    if len(points) != len(footprints) or not all(
            isinstance(p, BandwidthPoint) and p.bandwidth_Bps > 0 and p.samples_Bps for p in points):
        raise HybridtuneError(f"bandwidth benchmark gave {points!r} for {kernel} with {cores} cores "
                              f"at {footprints}, expected one positive BandwidthPoint per footprint")
    return points


def run_benchmarks(benchmark: BandwidthBenchmark, plan: dict, cores: list, rounds: int) -> dict:
    """kernel -> level -> [BandwidthPoint per core count], each the samples of every round.

    Rounds run one after the other over all kernels and core counts, so a neighbour's burst of
    work on a shared host spoils one round of a point rather than all of its samples.
    """
    levels = list(plan)
    samples: dict = {}
    for _ in range(rounds):
        for kernel in BENCH_KERNELS:
            for index, c in enumerate(cores):
                footprints = [plan[level][index] for level in levels]
                points = _points(benchmark, kernel.name, c, footprints)
                for level, point in zip(levels, points):
                    samples.setdefault((kernel.name, level, index), []).extend(point.samples_Bps)
    return {kernel.name: {level: [BandwidthPoint(plan[level][index],
                                                 statistics.median(samples[kernel.name, level, index]),
                                                 tuple(samples[kernel.name, level, index]))
                                  for index in range(len(cores))]
                          for level in levels}
            for kernel in BENCH_KERNELS}


def measurements_section(plan: dict, cores: list, measured: dict) -> dict:
    out = {}
    for level, totals in plan.items():
        out[level] = {1: {
            "cores": list(cores), "threads": list(cores), "threads per core": 1,
            "total size": [byte_text(t) for t in totals],
            "size per core": [byte_text(t / c) for t, c in zip(totals, cores)],
            "size per thread": [byte_text(t / c) for t, c in zip(totals, cores)],
            "results": {k: [gb_s(max(p.samples_Bps)) for p in measured[k][level]]
                        for k in sorted(measured)},
            "stats": {k: [[gb_s(s) for s in p.samples_Bps] for p in measured[k][level]]
                      for k in sorted(measured)},
        }}
    return out
