"""The machine probe: host facts and bandwidth benchmarks written as a kerncraft machine file."""

from __future__ import annotations

import math
import re
import statistics
import subprocess
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable

from hybridtune.errors import HybridtuneError
from hybridtune.compiler.build import native_source
from hybridtune.probe.bandwidth_check import check_bandwidths, check_lines
from hybridtune.probe.clock import ClockChoice, ClockMeasurement, choose_clock, measure_clock
from hybridtune.probe.core_model import (CORE_FACTS, CoreLayout, choose_osaca_architecture,
                                           flops_per_cycle, osaca_architectures, port_model)
from hybridtune.probe.host_facts import CacheFacts, HostFacts, read_host_facts
from hybridtune.compiler.programs import build_program, run_json


KERNCRAFT_FORMAT = "0.8.11.dev0"     # the last machine-file format change kerncraft lists
PROBE_PROGRAM = "ht_probe_bench"
GCC_FLAGS = "-O3 -march=native -D_POSIX_C_SOURCE=200809L -fopenmp -ffreestanding"
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

ClockBenchmark = Callable[[], ClockMeasurement]


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
    head = (f"{last} at the planned {_bytes(planned)} loaded {_gb_s(level)}, like memory "
            f"({_gb_s(memory)})")
    if fastest < LIKE_MEMORY * memory:
        return plan, [f"{head}; no footprint from {_bytes(candidates[0] if candidates else planned)} "
                      "up was clearly faster: the planned footprint stays"]
    chosen = max(p.footprint_bytes for p in points if _best(p) >= PLATEAU * fastest)
    changed = dict(plan)
    changed[last] = [int(s * chosen / planned) for s in plan[last]]
    tried = ", ".join(f"{_bytes(p.footprint_bytes)} {_best(p) / 1e9:.1f}" for p in points)
    return changed, [f"{head}; measured {last} at {_bytes(chosen)} instead, the largest footprint "
                     f"within {PLATEAU:g} of the fastest (1-core load GB/s: {tried})"]


def _gb_s(bps: float) -> str:
    return f"{bps / 1e9:.3f} GB/s"


def _bytes(value: float) -> str:
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


def _run_benchmarks(benchmark: BandwidthBenchmark, plan: dict, cores: list, rounds: int) -> dict:
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


def _measurements(plan: dict, cores: list, measured: dict) -> dict:
    out = {}
    for level, totals in plan.items():
        out[level] = {1: {
            "cores": list(cores), "threads": list(cores), "threads per core": 1,
            "total size": [_bytes(t) for t in totals],
            "size per core": [_bytes(t / c) for t, c in zip(totals, cores)],
            "size per thread": [_bytes(t / c) for t, c in zip(totals, cores)],
            "results": {k: [_gb_s(max(p.samples_Bps)) for p in measured[k][level]]
                        for k in sorted(measured)},
            "stats": {k: [[_gb_s(s) for s in p.samples_Bps] for p in measured[k][level]]
                      for k in sorted(measured)},
        }}
    return out


def _upstream(facts: HostFacts, layout: CoreLayout, measured: dict,
              clock_hz: float) -> tuple[list, list]:
    """Bytes per cycle of each cache level above L1 from the 1-core load kernel, and notes.

    Cycles per cache line at level k are 64 B x clock / bandwidth, with the clock the file states;
    with overlapping transfers they are the level's transfer time, without overlap the increase over
    the level below.
    """
    line = facts.caches[0].line_bytes
    cycles = [line * clock_hz / max(measured["load"][f"L{c.level}"][0].samples_Bps)
              for c in facts.caches]
    values, notes = [], []
    for k in range(1, len(cycles)):
        transfer = cycles[k] if layout.transfers_overlap else cycles[k] - cycles[k - 1]
        if transfer < 0.05 * cycles[k]:
            transfer = cycles[k]
            notes.append(f"L{facts.caches[k].level} load kernel was not slower than L"
                         f"{facts.caches[k - 1].level}: its upstream throughput is the level's "
                         "whole bandwidth")
        values.append(line / transfer)
    return values, notes


def _memory_hierarchy(facts: HostFacts, layout: CoreLayout, non_overlapping: list,
                      upstream: list) -> list:
    hierarchy = []
    caches = facts.caches
    for index, cache in enumerate(caches):
        last = index == len(caches) - 1
        policy = {"sets": cache.sets, "ways": cache.ways, "cl_size": cache.line_bytes,
                  "replacement_policy": "LRU",
                  "write_allocate": not (last and layout.victim_last_level and index > 0),
                  "write_back": True}
        if not last:
            upper = f"L{caches[index + 1].level}"
            feeds_victim = index + 1 == len(caches) - 1 and layout.victim_last_level and index > 0
            if feeds_victim:
                policy["load_from"] = upper if layout.victim_source_loads_from_last else None
                policy["victims_to"] = upper
            else:
                policy["load_from"] = upper
            policy["store_to"] = upper
        entry = {"level": f"L{cache.level}", "cache per group": policy,
                 "cores per group": cache.cores_per_group, "groups": cache.groups,
                 "threads per group": cache.cores_per_group * facts.threads_per_core,
                 "size per group": _bytes(cache.size_bytes)}
        if index == 0:
            entry["upstream throughput"] = ["architecture code analyzer", list(non_overlapping)]
        else:
            duplex = layout.duplex[min(index - 1, len(layout.duplex) - 1)]
            entry["upstream throughput"] = [f"{upstream[index - 1]:.2f} B/cy", duplex]
        entry["transfers overlap"] = layout.transfers_overlap
        hierarchy.append(entry)
    hierarchy.append({"level": "MEM", "cores per group": facts.cores_per_socket,
                      "threads per group": facts.cores_per_socket * facts.threads_per_core,
                      "upstream throughput": ["full socket memory bandwidth", "half-duplex"],
                      "transfers overlap": False, "size per group": None})
    return hierarchy


def _resolved_march() -> str:
    try:
        out = subprocess.run(["gcc", "-march=native", "-Q", "--help=target"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    match = re.search(r"^\s*-march=\s*(\S+)", out, re.MULTILINE)
    return match.group(1) if match else "unknown"


def _clock(facts: HostFacts, clock: ClockBenchmark | None) -> ClockChoice:
    try:
        measured = (clock or measure_clock)()
    except HybridtuneError as exc:
        return choose_clock(facts.clock_hz, facts.clock_source, exc)
    return choose_clock(facts.clock_hz, facts.clock_source, measured)


def probe_machine(facts: HostFacts | None = None, benchmark: BandwidthBenchmark | None = None,
                  samples: int = 5, min_seconds: float = 0.02, rounds: int = 2,
                  clock: ClockBenchmark | None = None) -> dict:
    """The host as a kerncraft machine file (plain data): read facts, choose models, measure.

    facts defaults to read_host_facts(); benchmark defaults to measure_bandwidth with samples and
    min_seconds (seconds per sample), called `rounds` times per kernel and core count; clock
    defaults to measure_clock, whose result becomes the file's clock when choose_clock finds it
    plausible. Bandwidths are measured for 1..cores per socket (capped by the cores this process
    may use), one thread per core, at footprints from level_footprints and last_level_regime.
    """
    facts = facts or read_host_facts()
    bench = benchmark or partial(measure_bandwidth, samples=samples, min_seconds=min_seconds)
    chosen_clock = _clock(facts, clock)
    arch, arch_note = choose_osaca_architecture(facts.vendor, facts.cpu_family, facts.flags,
                                                osaca_architectures())
    overlapping, non_overlapping, micro_architecture = port_model(arch)
    layout = CORE_FACTS[arch][0]
    measured_cores = min(facts.cores_per_socket, facts.usable_cores)
    cores = list(range(1, measured_cores + 1))
    plan, notes = level_footprints(facts, cores)
    started = time.monotonic()
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise HybridtuneError(f"probe_machine needs rounds >= 1, got {rounds!r}")
    plan, regime_notes = last_level_regime(bench, facts, plan)
    measured = _run_benchmarks(bench, plan, cores, rounds)
    elapsed = time.monotonic() - started
    upstream, upstream_notes = _upstream(facts, layout, measured, chosen_clock.clock_hz)
    notes = [chosen_clock.note, arch_note,
             f"sockets, cores and threads from {facts.topology_source}; caches from "
             "/sys/devices/system/cpu/cpu0/cache",
             f"port model from OSACA's {arch} data: non-overlapping = load data ports "
             f"{non_overlapping}",
             f"FLOPs per cycle from the {arch} pipes ({CORE_FACTS[arch][2]} FMA, "
             f"{CORE_FACTS[arch][3]} ADD, {CORE_FACTS[arch][4]} MUL) and the vector width the "
             "flags allow",
             f"cache policies, duplexness and overlap follow the {layout.name} layout",
             "upstream throughput above L1: the 1-core load kernel's cycles per cache line at that "
             "level" + ("" if layout.transfers_overlap else " minus those of the level below"),
             f"bandwidths: native/{PROBE_PROGRAM}.c, every kernel measured (none derived), bytes "
             "counted as likwid-bench does (no write-allocate); results are the best sample, "
             "stats all samples",
             f"footprints: {LEVEL_SHARE:g} of each cache level's capacity in use, memory "
             f"{MEMORY_FACTOR}x the last level cache",
             f"gcc resolves -march=native to {_resolved_march()} here",
             f"benchmarks took {elapsed:.1f} s ({rounds} rounds of {len(BENCH_KERNELS)} kernels "
             f"x {len(cores)} core counts)"] + notes + regime_notes + upstream_notes
    if measured_cores < facts.cores_per_socket:
        notes.append(f"only {measured_cores} of {facts.cores_per_socket} cores per socket are "
                     "usable here: measurements stop there")
    last = f"L{facts.caches[-1].level}"
    llc, memory = (max(measured["load"][lvl][0].samples_Bps) for lvl in (last, "MEM"))
    if llc < LIKE_MEMORY * memory:
        notes.append(f"warning: the {last} footprint behaved like main memory (1-core load "
                     f"{_gb_s(llc)} against {_gb_s(memory)}): the reported {last} size may not be "
                     "usable here")
    per_numa = max(1, facts.cores // facts.numa_domains)
    mapping = {
        "kerncraft version": KERNCRAFT_FORMAT,
        "model type": f"{micro_architecture} class core, probed by hybridtune",
        "model name": facts.model_name,
        "clock": f"{chosen_clock.clock_hz / 1e9:.4g} GHz",
        "nominal clock": f"{chosen_clock.nominal_hz / 1e9:.4g} GHz",
        "sockets": facts.sockets,
        "cores per socket": facts.cores_per_socket,
        "threads per core": facts.threads_per_core,
        "NUMA domains per socket": max(1, facts.numa_domains // facts.sockets),
        "cores per NUMA domain": per_numa,
        "transparent hugepage": facts.transparent_hugepage,
        "in-core model": {"OSACA": arch},
        "isa": "x86",
        "compiler": {"gcc": GCC_FLAGS},
        "FLOPs per cycle": flops_per_cycle(arch, facts.flags),
        "overlapping model": {"ports": {"OSACA": overlapping}},
        "non-overlapping model": {"ports": {"OSACA": non_overlapping}},
        "cacheline size": f"{facts.caches[0].line_bytes} B",
        "memory hierarchy": _memory_hierarchy(facts, layout, non_overlapping, upstream),
        "benchmarks": {
            "kernels": {k.name: {"FLOPs per iteration": k.flops,
                                 "read streams": {"bytes": f"{8 * k.read_streams:.2f} B",
                                                  "streams": k.read_streams},
                                 "read+write streams": {"bytes": f"{8 * k.read_write_streams:.2f} B",
                                                        "streams": k.read_write_streams},
                                 "write streams": {"bytes": f"{8 * k.write_streams:.2f} B",
                                                   "streams": k.write_streams},
                                 "measured as": f"{PROBE_PROGRAM} -k {k.name}: {k.formula}"}
                        for k in BENCH_KERNELS},
            "measurements": _measurements(plan, cores, measured),
        },
        "probe notes": notes,
    }
    checks = check_bandwidths(mapping)
    mapping["bandwidth check"] = {
        c.level: {"file": None if c.file_Bps is None else _gb_s(c.file_Bps),
                  "measured": _gb_s(c.measured_Bps),
                  "file / measured": None if c.ratio is None else round(c.ratio, 3)}
        for c in checks}
    notes.append("bandwidth check: each level's 1-core load bandwidth as kerncraft's ECM model "
                 "composes it from this file against the measured one")
    notes.extend(f"bandwidth check: {c.level} file {_gb_s(c.file_Bps)}, measured "
                 f"{_gb_s(c.measured_Bps)}, ratio {c.ratio:.2f}" for c in checks if c.ratio)
    return mapping


def probe_summary(mapping: dict) -> list:
    """Lines that say what a probed machine file holds: clock (effective and nominal) and the check."""
    clock = next((n for n in mapping.get("probe notes", ()) if str(n).startswith("clock: ")),
                 f"clock: {mapping.get('clock')}")
    lines = [f"{mapping.get('model name')}: {mapping.get('clock')} in the file (nominal "
             f"{mapping.get('nominal clock')}), in-core model {dict(mapping.get('in-core model', {}))}",
             clock]
    lines.extend(n for n in mapping.get("probe notes", ()) if " like memory " in str(n))
    return lines + check_lines(check_bandwidths(mapping))
