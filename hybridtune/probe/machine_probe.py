"""The machine probe: host facts and bandwidth benchmarks written as a kerncraft machine file."""

from __future__ import annotations

import time
from functools import partial
from typing import Callable

from hybridtune.describe.machine import OWN_COMPILER
from hybridtune.errors import HybridtuneError
from hybridtune.probe.bandwidth import (BENCH_KERNELS, LEVEL_SHARE, LIKE_MEMORY, MEMORY_FACTOR,
                                        PROBE_PROGRAM, BandwidthBenchmark, byte_text, gb_s,
                                        last_level_regime, level_footprints, measure_bandwidth,
                                        measurements_section, run_benchmarks)
from hybridtune.probe.bandwidth_check import check_bandwidths, check_lines
from hybridtune.probe.clock import ClockChoice, ClockMeasurement, choose_clock, measure_clock
from hybridtune.probe.core_model import (CORE_FACTS, CoreLayout, choose_osaca_architecture,
                                           flops_per_cycle, osaca_architectures, port_model)
from hybridtune.probe.host_facts import HostFacts, read_host_facts
from hybridtune.probe.target import NAME_MAX, kerncraft_target, resolved_target


KERNCRAFT_FORMAT = "0.8.11.dev0"     # the last machine-file format change kerncraft lists
GCC_FLAGS = "-O3 {target} -fno-trapping-math -D_POSIX_C_SOURCE=200809L -fopenmp -ffreestanding"

ClockBenchmark = Callable[[], ClockMeasurement]


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
        elif layout.transfers_overlap and cycles[k] < max(cycles[:k]):
            slowest = facts.caches[max(range(k), key=lambda i: cycles[i])].level
            notes.append(f"L{facts.caches[k].level} load kernel was not slower than L{slowest}: "
                         "with overlapping transfers the file composes it no faster than that level")
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
                 "size per group": byte_text(cache.size_bytes)}
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


def _clock(facts: HostFacts, clock: ClockBenchmark | None) -> ClockChoice:
    try:
        measured = (clock or measure_clock)()
    except HybridtuneError as exc:
        return choose_clock(facts.clock_hz, facts.clock_source, exc)
    return choose_clock(facts.clock_hz, facts.clock_source, measured)


def probe_machine(facts: HostFacts | None = None, benchmark: BandwidthBenchmark | None = None,
                  samples: int = 5, min_seconds: float = 0.02, rounds: int = 2,
                  clock: ClockBenchmark | None = None, target: str | None = None) -> dict:
    """The host as a kerncraft machine file (plain data): read facts, choose models, measure.

    facts defaults to read_host_facts(); benchmark defaults to measure_bandwidth with samples and
    min_seconds (seconds per sample), called `rounds` times per kernel and core count; clock
    defaults to measure_clock, whose result becomes the file's clock when choose_clock finds it
    plausible; target (gcc's -march=native resolved, default resolved_target()) goes into the
    compiler flags (compiler_entries). Bandwidths are measured for 1..cores per socket (capped by
    the cores this process may use), one thread per core, at footprints from level_footprints and
    last_level_regime.
    """
    facts = facts or read_host_facts()
    bench = benchmark or partial(measure_bandwidth, samples=samples, min_seconds=min_seconds)
    chosen_clock = _clock(facts, clock)
    arch, arch_note = choose_osaca_architecture(facts.vendor, facts.cpu_family, facts.flags,
                                                osaca_architectures())
    overlapping, non_overlapping, micro_architecture = port_model(arch)
    layout = CORE_FACTS[arch][0]
    target = target or resolved_target()
    compilers, target_notes = compiler_entries(target)
    measured_cores = min(facts.cores_per_socket, facts.usable_cores)
    cores = list(range(1, measured_cores + 1))
    plan, notes = level_footprints(facts, cores)
    started = time.monotonic()
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise HybridtuneError(f"probe_machine needs rounds >= 1, got {rounds!r}")
    plan, regime_notes = last_level_regime(bench, facts, plan)
    measured = run_benchmarks(bench, plan, cores, rounds)
    elapsed = time.monotonic() - started
    upstream, upstream_notes = _upstream(facts, layout, measured, chosen_clock.clock_hz)
    notes = [chosen_clock.note, arch_note,
             *_model_notes(facts, arch, non_overlapping, layout, target), *target_notes,
             f"benchmarks took {elapsed:.1f} s ({rounds} rounds of {len(BENCH_KERNELS)} kernels "
             f"x {len(cores)} core counts)"] + notes + regime_notes + upstream_notes
    notes += _usable_notes(facts, measured_cores, measured)
    mapping = {
        **_host_keys(facts, chosen_clock, micro_architecture, arch),
        **compilers,
        "FLOPs per cycle": flops_per_cycle(arch, facts.flags),
        "overlapping model": {"ports": {"OSACA": overlapping}},
        "non-overlapping model": {"ports": {"OSACA": non_overlapping}},
        "cacheline size": f"{facts.caches[0].line_bytes} B",
        "memory hierarchy": _memory_hierarchy(facts, layout, non_overlapping, upstream),
        "benchmarks": {
            "kernels": _kernels_section(),
            "measurements": measurements_section(plan, cores, measured),
        },
        "probe notes": notes,
    }
    _add_bandwidth_check(mapping, notes)
    return mapping


def _model_notes(facts: HostFacts, arch: str, non_overlapping, layout, target: str
                 ) -> list[str]:
    """Where the file's models come from: topology, ports, FLOPs, caches, bandwidths, target."""
    return [f"sockets, cores and threads from {facts.topology_source}; caches from "
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
            f"gcc resolves -march=native to {target} here; kerncraft compiles for that target, "
            "so the file predicts the same from any host"]


def _usable_notes(facts: HostFacts, measured_cores: int, measured: dict) -> list[str]:
    """Warnings: fewer cores usable than a socket has, a last level cache that acts as memory."""
    notes = []
    if measured_cores < facts.cores_per_socket:
        notes.append(f"only {measured_cores} of {facts.cores_per_socket} cores per socket are "
                     "usable here: measurements stop there")
    last = f"L{facts.caches[-1].level}"
    llc, memory = (max(measured["load"][lvl][0].samples_Bps) for lvl in (last, "MEM"))
    if llc < LIKE_MEMORY * memory:
        notes.append(f"warning: the {last} footprint behaved like main memory (1-core load "
                     f"{gb_s(llc)} against {gb_s(memory)}): the reported {last} size may not be "
                     "usable here")
    return notes


def _host_keys(facts: HostFacts, chosen_clock, micro_architecture: str, arch: str) -> dict:
    """The machine file's first keys: format, model, clocks, topology and in-core model."""
    return {
        "kerncraft version": KERNCRAFT_FORMAT,
        "model type": f"{micro_architecture} class core, probed by hybridtune",
        "model name": facts.model_name,
        "clock": f"{chosen_clock.clock_hz / 1e9:.4g} GHz",
        "nominal clock": f"{chosen_clock.nominal_hz / 1e9:.4g} GHz",
        "sockets": facts.sockets,
        "cores per socket": facts.cores_per_socket,
        "threads per core": facts.threads_per_core,
        "NUMA domains per socket": max(1, facts.numa_domains // facts.sockets),
        "cores per NUMA domain": max(1, facts.cores // facts.numa_domains),
        "transparent hugepage": facts.transparent_hugepage,
        "in-core model": {"OSACA": arch},
        "isa": "x86",
    }


def _kernels_section() -> dict:
    """The benchmark kernels as kerncraft's machine file describes them."""
    return {k.name: {"FLOPs per iteration": k.flops,
                     "read streams": {"bytes": f"{8 * k.read_streams:.2f} B",
                                      "streams": k.read_streams},
                     "read+write streams": {"bytes": f"{8 * k.read_write_streams:.2f} B",
                                            "streams": k.read_write_streams},
                     "write streams": {"bytes": f"{8 * k.write_streams:.2f} B",
                                       "streams": k.write_streams},
                     "measured as": f"{PROBE_PROGRAM} -k {k.name}: {k.formula}"}
            for k in BENCH_KERNELS}


def _add_bandwidth_check(mapping: dict, notes: list) -> None:
    """The file's ECM composition of each level's 1-core load bandwidth against the measured one,
    added to the mapping and its notes."""
    checks = check_bandwidths(mapping)
    mapping["bandwidth check"] = {
        c.level: {"file": None if c.file_Bps is None else gb_s(c.file_Bps),
                  "measured": gb_s(c.measured_Bps),
                  "file / measured": None if c.ratio is None else round(c.ratio, 3)}
        for c in checks}
    notes.append("bandwidth check: each level's 1-core load bandwidth as kerncraft's ECM model "
                 "composes it from this file against the measured one")
    notes.extend(f"bandwidth check: {c.level} file {gb_s(c.file_Bps)}, measured "
                 f"{gb_s(c.measured_Bps)}, ratio {c.ratio:.2f}" for c in checks if c.ratio)


def compiler_entries(target: str) -> tuple[dict, list]:
    """The file's compiler keys for a resolved target, and notes.

    kerncraft names a folder after the compiler flags joined, which fails beyond NAME_MAX bytes:
    there `compiler` gets kerncraft_target's short form and OWN_COMPILER (a key kerncraft ignores)
    the whole target, which hybridtune's analyses and build identities use.
    """
    whole = GCC_FLAGS.format(target=target)
    short = kerncraft_target(target, GCC_FLAGS)
    if short == target:
        return {"compiler": {"gcc": whole}}, []
    kept = "the CPU's name, the vector extensions added to it and those hidden" \
        if short != "-march=native" else "-march=native"
    return ({"compiler": {"gcc": GCC_FLAGS.format(target=short)}, OWN_COMPILER: {"gcc": whole}},
            [f"compiler: the whole target would make kerncraft's folder name longer than "
             f"{NAME_MAX} bytes; 'compiler' gives kerncraft {short} ({kept}), "
             f"'{OWN_COMPILER}' the whole target, which hybridtune's analyses use"])


def probe_summary(mapping: dict) -> list:
    """Lines that say what a probed machine file holds: clock (effective and nominal) and the check."""
    clock = next((n for n in mapping.get("probe notes", ()) if str(n).startswith("clock: ")),
                 f"clock: {mapping.get('clock')}")
    lines = [f"{mapping.get('model name')}: {mapping.get('clock')} in the file (nominal "
             f"{mapping.get('nominal clock')}), in-core model {dict(mapping.get('in-core model', {}))}",
             clock]
    lines.extend(n for n in mapping.get("probe notes", ())
                 if " like memory " in str(n) or str(n).startswith("compiler: "))
    return lines + check_lines(check_bandwidths(mapping))
