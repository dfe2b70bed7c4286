"""The machine probe: host facts and bandwidth benchmarks written as a kerncraft machine file."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable, Mapping

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedOrderedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter

from hybridtune.describe.machine import REQUIRED
from hybridtune.errors import HybridtuneError
from hybridtune.measure.build import native_source
from hybridtune.measure.microbench import build_program, run_json

KERNCRAFT_FORMAT = "0.8.11.dev0"     # the last machine-file format change kerncraft lists
PROBE_PROGRAM = "ht_probe_bench"
GCC_FLAGS = "-O3 -march=native -D_POSIX_C_SOURCE=200809L -fopenmp -ffreestanding"
LEVEL_SHARE = 0.5          # a cache level's footprint: this share of the capacity the cores use
SURPASS = 1.5              # ... and at least this multiple of the level below
MEMORY_FACTOR = 4          # the memory footprint: this multiple of the last level cache
MEMORY_SHARE_LIMIT = 0.25  # ... but at most this share of the available memory
LIKE_MEMORY = 1.15         # a cache level this close to memory bandwidth behaves like memory


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
class CacheFacts:
    """One data cache level as the kernel reports it; groups count the whole machine."""
    level: int
    size_bytes: int
    sets: int
    ways: int
    line_bytes: int
    cores_per_group: int
    groups: int


@dataclass(frozen=True)
class HostFacts:
    """What the probe reads about the host before it measures anything."""
    model_name: str
    vendor: str
    cpu_family: int
    flags: frozenset
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    numa_domains: int
    usable_cores: int
    clock_hz: float
    clock_source: str
    caches: tuple
    available_memory_bytes: int
    transparent_hugepage: str
    topology_source: str

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket


@dataclass(frozen=True)
class BandwidthPoint:
    """Bandwidth at one total footprint, in read-stream plus write-stream bytes per second."""
    footprint_bytes: int
    bandwidth_Bps: float
    samples_Bps: tuple


BandwidthBenchmark = Callable[[str, int, list], list]
"""(kernel name, threads, footprints in bytes) -> one BandwidthPoint per footprint, in order."""


@dataclass(frozen=True)
class CoreLayout:
    """Cache policies and overlap as kerncraft's published files give them for a processor family."""
    name: str
    transfers_overlap: bool
    duplex: tuple              # upstream duplexness of L2, L3, ...
    victim_last_level: bool    # the last cache level takes the victims of the one below
    victim_source_loads_from_last: bool


ZEN = CoreLayout("Zen (Zen2_EPYC-7452.yml)", True, ("full-duplex", "half-duplex"), True, True)
INTEL_VICTIM = CoreLayout("Skylake SP (SkylakeSP_Gold-6148.yml)", False,
                          ("half-duplex", "full-duplex"), True, False)
INTEL_INCLUSIVE = CoreLayout("Haswell EP (HaswellEP_E5-2695v3.yml)", False,
                             ("half-duplex", "half-duplex"), False, False)

# OSACA architecture -> (layout, datapath width in doubles, FMA pipes, ADD pipes, MUL pipes).
CORE_FACTS = {
    "ZEN1": (ZEN, 2, 2, 2, 2), "ZEN2": (ZEN, 4, 2, 2, 2), "ZEN3": (ZEN, 4, 2, 2, 2),
    "ZEN4": (ZEN, 4, 2, 2, 2),
    "SNB": (INTEL_INCLUSIVE, 4, 0, 1, 1), "IVB": (INTEL_INCLUSIVE, 4, 0, 1, 1),
    "HSW": (INTEL_INCLUSIVE, 4, 2, 1, 2), "BDW": (INTEL_INCLUSIVE, 4, 2, 1, 2),
    "SKX": (INTEL_VICTIM, 8, 2, 2, 2), "CSX": (INTEL_VICTIM, 8, 2, 2, 2),
    "ICX": (INTEL_VICTIM, 8, 2, 2, 2), "ICL": (INTEL_VICTIM, 8, 1, 1, 1),
    "SPR": (INTEL_VICTIM, 8, 2, 2, 2),
}


# ---------------------------------------------------------------- host facts

def _read(path: Path, default: str | None = None) -> str:
    try:
        return path.read_text()
    except OSError:
        if default is None:
            raise HybridtuneError(f"machine probe: cannot read {path}") from None
        return default


def _cpuinfo(root: Path) -> tuple[dict, list]:
    """The first processor's fields and every processor's 'cpu MHz'."""
    first: dict[str, str] = {}
    mhz = []
    for block in _read(root / "proc" / "cpuinfo").split("\n\n"):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if not fields:
            continue
        first = first or fields
        try:
            mhz.append(float(fields["cpu MHz"]))
        except (KeyError, ValueError):
            pass
    if not first:
        raise HybridtuneError(f"machine probe: {root / 'proc' / 'cpuinfo'} lists no processor")
    return first, mhz


def _cpu_list(text: str) -> list[int]:
    cpus = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def _size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)B?\s*", text)
    if not match:
        raise HybridtuneError(f"machine probe: cache size {text!r} is not like '32K'")
    return int(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]


def _online_cpus(root: Path) -> list[int]:
    online = _read(root / "sys/devices/system/cpu/online", "")
    if online.strip():
        return _cpu_list(online)
    return sorted(int(p.name[3:]) for p in (root / "sys/devices/system/cpu").glob("cpu[0-9]*"))


def _sysfs_topology(root: Path) -> dict:
    cpus = _online_cpus(root)
    base = root / "sys/devices/system/cpu"
    packages, cores = set(), set()
    for cpu in cpus:
        package = _read(base / f"cpu{cpu}/topology/physical_package_id", "0").strip()
        core = _read(base / f"cpu{cpu}/topology/core_id", str(cpu)).strip()
        packages.add(package)
        cores.add((package, core))
    nodes = list((root / "sys/devices/system/node").glob("node[0-9]*"))
    sockets = max(1, len(packages))
    return {"sockets": sockets, "cores_per_socket": max(1, len(cores) // sockets),
            "threads_per_core": max(1, len(cpus) // max(1, len(cores))),
            "numa_domains": max(1, len(nodes))}


def _lscpu_topology() -> dict | None:
    try:
        result = subprocess.run(["lscpu", "-J"], capture_output=True, text=True, timeout=30)
        rows = json.loads(result.stdout)["lscpu"]
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return None
    fields = {}
    for row in rows:
        if isinstance(row, dict):
            fields[str(row.get("field", "")).rstrip(":")] = row.get("data")
    try:
        return {"sockets": int(fields["Socket(s)"]),
                "cores_per_socket": int(fields["Core(s) per socket"]),
                "threads_per_core": int(fields["Thread(s) per core"]),
                "numa_domains": int(fields.get("NUMA node(s)", 1))}
    except (KeyError, ValueError, TypeError):
        return None


def _caches(root: Path, threads_per_core: int, total_cores: int) -> tuple:
    found = {}
    for index in sorted((root / "sys/devices/system/cpu/cpu0/cache").glob("index[0-9]*")):
        kind = _read(index / "type", "").strip()
        if kind not in ("Data", "Unified"):
            continue
        level_text = _read(index / "level").strip()
        if not level_text.isdigit():
            raise HybridtuneError(f"machine probe: {index / 'level'} holds {level_text!r}")
        level = int(level_text)
        size = _size(_read(index / "size"))
        line = int(_read(index / "coherency_line_size", "64").strip() or 64)
        ways = int(_read(index / "ways_of_associativity", "0").strip() or 0)
        sets = int(_read(index / "number_of_sets", "0").strip() or 0)
        if ways <= 0:
            ways = max(1, size // (line * max(sets, 1)))
        if sets <= 0 or sets * ways * line != size:
            sets = max(1, size // (ways * line))
        sharing = _cpu_list(_read(index / "shared_cpu_list", "0"))
        per_group = min(total_cores, max(1, len(sharing) // threads_per_core))
        found[level] = CacheFacts(level, size, sets, ways, line, per_group,
                                  max(1, total_cores // per_group))
    if not found:
        raise HybridtuneError(f"machine probe: no data caches under {root}/sys/devices/system/cpu/"
                              "cpu0/cache")
    return tuple(found[level] for level in sorted(found))


def _nominal_clock(root: Path, model_name: str, mhz: list) -> tuple[float, str]:
    match = re.search(r"@\s*([0-9.]+)\s*GHz", model_name)
    if match:
        return float(match.group(1)) * 1e9, "the model name's nominal clock"
    base = _read(root / "sys/devices/system/cpu/cpu0/cpufreq/base_frequency", "").strip()
    if base.isdigit():
        return int(base) * 1e3, "cpufreq base_frequency (the nominal clock)"
    if mhz:
        return statistics.median(mhz) * 1e6, ("/proc/cpuinfo 'cpu MHz' (median over CPUs; under a "
                                              "hypervisor the TSC clock)")
    top = _read(root / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "").strip()
    if top.isdigit():
        return int(top) * 1e3, "cpufreq cpuinfo_max_freq (the highest clock, not the nominal one)"
    raise HybridtuneError("machine probe: no clock in the model name, cpufreq or /proc/cpuinfo")


def _available_memory(root: Path) -> int:
    fields = dict(line.split(":", 1) for line in _read(root / "proc/meminfo", "").splitlines()
                  if ":" in line)
    for key in ("MemAvailable", "MemTotal"):
        if key in fields:
            return int(fields[key].split()[0]) * 1024
    return 0


def read_host_facts(root: Path | str = "/", use_lscpu: bool | None = None) -> HostFacts:
    """Host facts from /proc and /sys under root, with sockets and cores from lscpu when it runs.

    use_lscpu defaults to True for the real root "/" only (lscpu always reads the running system).
    """
    root = Path(root)
    if use_lscpu is None:
        use_lscpu = root == Path("/")
    first, mhz = _cpuinfo(root)
    if "flags" not in first:
        raise HybridtuneError("machine probe: /proc/cpuinfo has no 'flags': only x86 hosts are "
                              "supported (OSACA's model choice reads the x86 feature flags)")
    topology = _lscpu_topology() if use_lscpu else None
    source = "lscpu"
    if topology is None:
        topology, source = _sysfs_topology(root), "/sys/devices/system/cpu topology"
    total = topology["sockets"] * topology["cores_per_socket"]
    model_name = first.get("model name", "unknown")
    clock, clock_source = _nominal_clock(root, model_name, mhz)
    usable = len(os.sched_getaffinity(0)) if root == Path("/") else len(_online_cpus(root))
    thp = re.search(r"\[(\w+)\]", _read(root / "sys/kernel/mm/transparent_hugepage/enabled", ""))
    family = first.get("cpu family", "")
    return HostFacts(
        model_name=model_name, vendor=first.get("vendor_id", "unknown"),
        cpu_family=int(family) if family.isdigit() else 0,
        flags=frozenset(first["flags"].split()),
        sockets=topology["sockets"], cores_per_socket=topology["cores_per_socket"],
        threads_per_core=topology["threads_per_core"],
        numa_domains=max(1, topology["numa_domains"]),
        usable_cores=max(1, usable // topology["threads_per_core"]), clock_hz=clock,
        clock_source=clock_source, caches=_caches(root, topology["threads_per_core"], total),
        available_memory_bytes=_available_memory(root),
        transparent_hugepage=thp.group(1) if thp else "unknown", topology_source=source)


# ---------------------------------------------------------------- in-core model

@lru_cache(maxsize=None)
def osaca_architectures() -> dict:
    """Architecture name -> file for every model in the installed OSACA's package data.

    OSACA finds a model by file name (SKX -> data/skx.yml), so the upper-case file stem is the name
    a machine file gives; only files that describe ports count.
    """
    spec = importlib.util.find_spec("osaca")
    if spec is None or not spec.submodule_search_locations:
        raise HybridtuneError("machine probe: OSACA is not installed (pip install osaca)")
    found = {}
    for path in sorted(Path(list(spec.submodule_search_locations)[0], "data").glob("*.yml")):
        with path.open(errors="replace") as handle:
            head = handle.read(8192)
        if re.search(r"^ports:", head, re.MULTILINE) and re.fullmatch(r"[a-z0-9]+", path.stem):
            found[path.stem.upper()] = path
    return found


def _wanted_architectures(vendor: str, family: int, flags: frozenset) -> tuple[list, str]:
    """Preferred OSACA models for this CPU, best first, and what the flags say the core is."""
    has = flags.__contains__
    if vendor in ("AuthenticAMD", "HygonGenuine"):
        if has("avx512f"):
            core = "Zen 5 class" if family >= 0x1A else "Zen 4 class"
            return ["ZEN4", "ZEN3", "ZEN2", "ZEN1"], f"AMD with AVX-512: {core}"
        if has("vaes") and has("avx2"):
            return ["ZEN3", "ZEN2", "ZEN1"], "AMD with VAES and AVX2: Zen 3 class"
        if has("avx2") and has("clwb"):
            return ["ZEN2", "ZEN1"], "AMD with AVX2 and CLWB: Zen 2 class"
        return ["ZEN1", "ZEN2"], "AMD without VAES or CLWB: Zen 1 class or older"
    if vendor == "GenuineIntel":
        if has("amx_tile"):
            return ["SPR", "ICX", "SKX"], "Intel with AMX: Sapphire Rapids class"
        if has("avx512f") and (has("avx512_vbmi2") or has("avx512_bitalg")):
            return ["ICX", "ICL", "SKX"], "Intel with AVX-512 VBMI2/BITALG: Ice Lake class"
        if has("avx512_vnni"):
            return ["CSX", "SKX"], "Intel with AVX-512 VNNI: Cascade Lake class"
        if has("avx512f"):
            return ["SKX", "CSX"], "Intel with AVX-512: Skylake SP class"
        if has("avx_vnni"):
            return ["SPR", "ICX"], "Intel with AVX-VNNI but no AVX-512: a Golden Cove class client core"
        if has("avx2") and has("clflushopt"):
            return ["SKX", "BDW"], "Intel with AVX2 and CLFLUSHOPT: a Skylake class client core"
        if has("avx2"):
            return (["BDW", "HSW"] if has("adx") else ["HSW", "BDW"]), "Intel with AVX2"
        if has("avx"):
            return (["IVB", "SNB"] if has("f16c") else ["SNB", "IVB"]), "Intel with AVX only"
        return ["SNB"], "Intel without AVX"
    return ["SKX", "ZEN2"], f"vendor {vendor!r} is neither Intel nor AMD"


def choose_osaca_architecture(vendor: str, family: int, flags, available) -> tuple[str, str]:
    """The OSACA model for a CPU from its vendor and flags, and a note on how it was chosen."""
    wanted, reason = _wanted_architectures(vendor, family, frozenset(flags))
    have = {a.upper() for a in available}
    for arch in wanted:
        if arch in have and arch in CORE_FACTS:
            if arch == wanted[0]:
                return arch, f"OSACA model {arch}: {reason}"
            return arch, (f"OSACA model {arch}: {reason}; the installed OSACA lacks {wanted[0]}, "
                          f"{arch} is the nearest it has")
    raise HybridtuneError(f"machine probe: the installed OSACA has none of {', '.join(wanted)} "
                          f"({reason}); it has {', '.join(sorted(have)) or 'nothing'}")


def _port_names(entry) -> list:
    return list(entry) if isinstance(entry, str) else [str(p) for p in entry]


def port_model(arch: str) -> tuple[list, list, str]:
    """(overlapping ports, non-overlapping ports, micro-architecture name) from OSACA's data.

    The non-overlapping ports are the load data ports ('2D', '8D', ...) of OSACA's default load,
    or its load ports where the model names no data ports; every other port overlaps.
    """
    path = osaca_architectures().get(arch)
    if path is None:
        raise HybridtuneError(f"machine probe: OSACA has no architecture {arch}")
    lines = []
    with path.open(errors="replace") as handle:
        for line in handle:
            if line.startswith("instruction_forms:"):
                break
            lines.append(line)
    header = "".join(lines)
    try:
        data = YAML(typ="safe", pure=True).load(header)
    except YAMLError as exc:
        raise HybridtuneError(f"machine probe: cannot read the header of {path}: {exc}") from None
    ports = [str(p) for p in data.get("ports", [])]
    loads = [p for _, group in data.get("load_throughput_default", []) for p in _port_names(group)]
    data_ports = [p for p in loads if p.endswith("D") and not p.endswith("DV")]
    non_overlapping = list(dict.fromkeys(data_ports or loads))
    if not ports or not non_overlapping:
        raise HybridtuneError(f"machine probe: {path} names no ports or no load ports")
    overlapping = [p for p in ports if p not in non_overlapping]
    return overlapping, non_overlapping, str(data.get("micro_architecture") or arch)


def flops_per_cycle(arch: str, flags) -> dict:
    """Peak FLOPs per cycle per precision, kerncraft style (FMA, ADD, MUL lanes; total counts FMA twice)."""
    _, datapath, fma, add, mul = CORE_FACTS[arch]
    flags = frozenset(flags)
    width = 8 if "avx512f" in flags else 4 if "avx" in flags else 2
    width = min(width, datapath)
    fma = fma if "fma" in flags else 0
    result = {}
    for precision, scale in (("DP", 1), ("SP", 2)):
        lanes = width * scale
        row = {"FMA": fma * lanes, "ADD": add * lanes, "MUL": mul * lanes}
        row["total"] = 2 * row["FMA"] if fma else row["ADD"] + row["MUL"]
        result[precision] = row
    return result


# ---------------------------------------------------------------- benchmarks

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


def _gb_s(bps: float) -> str:
    return f"{bps / 1e9:.3f} GB/s"


def _bytes(value: float) -> str:
    """A byte count as kerncraft's prefixed units read it (decimal prefixes, exact where it can)."""
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            text = f"{value / scale:.6f}".rstrip("0").rstrip(".")
            return f"{text} {prefix}B"
    return f"{value:.2f} B"


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
                points = list(benchmark(kernel.name, c, footprints))
                if len(points) != len(footprints) or not all(
                        isinstance(p, BandwidthPoint) and p.bandwidth_Bps > 0 and p.samples_Bps
                        for p in points):
                    raise HybridtuneError(f"bandwidth benchmark gave {points!r} for {kernel.name} "
                                          f"with {c} cores at {footprints}, expected one positive "
                                          "BandwidthPoint per footprint")
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


def _upstream(facts: HostFacts, layout: CoreLayout, measured: dict) -> tuple[list, list]:
    """Bytes per cycle of each cache level above L1 from the 1-core load kernel, and notes.

    Cycles per cache line at level k are 64 B x clock / bandwidth; with overlapping transfers they
    are the level's transfer time, without overlap the increase over the level below.
    """
    line = facts.caches[0].line_bytes
    cycles = [line * facts.clock_hz / max(measured["load"][f"L{c.level}"][0].samples_Bps)
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


def probe_machine(facts: HostFacts | None = None, benchmark: BandwidthBenchmark | None = None,
                  samples: int = 5, min_seconds: float = 0.02, rounds: int = 2) -> dict:
    """The host as a kerncraft machine file (plain data): read facts, choose models, measure.

    facts defaults to read_host_facts(); benchmark defaults to measure_bandwidth with samples and
    min_seconds (seconds per sample), called `rounds` times per kernel and core count.
    Bandwidths are measured for 1..cores per socket (capped by the cores this process may use),
    one thread per core, at footprints from level_footprints.
    """
    facts = facts or read_host_facts()
    bench = benchmark or partial(measure_bandwidth, samples=samples, min_seconds=min_seconds)
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
    measured = _run_benchmarks(bench, plan, cores, rounds)
    elapsed = time.monotonic() - started
    upstream, upstream_notes = _upstream(facts, layout, measured)
    notes = [f"clock from {facts.clock_source}", arch_note,
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
             f"x {len(cores)} core counts)"] + notes + upstream_notes
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
    return {
        "kerncraft version": KERNCRAFT_FORMAT,
        "model type": f"{micro_architecture} class core, probed by hybridtune",
        "model name": facts.model_name,
        "clock": f"{facts.clock_hz / 1e9:.4g} GHz",
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


# ---------------------------------------------------------------- writing

def _block_omap(mapping: Mapping) -> CommentedOrderedMap:
    omap = CommentedOrderedMap(mapping.items())
    omap.fa.set_block_style()
    return omap


class _MachineFileRepresenter(RoundTripRepresenter):
    """Writes quantities ('2.4 GHz', '32.768 kB') plain, as kerncraft's implicit unit resolver needs.

    Once kerncraft is imported its resolver claims such scalars, and a plain writer would quote them
    to keep them strings; tagging them as the resolver resolves them keeps them plain either way.
    """


_QUANTITY = re.compile(r"[0-9]+(?:\.[0-9]+)? [kMGTP]?[A-Za-z/]+")


def _represent_str(representer, data: str):
    if _QUANTITY.fullmatch(data):
        tag = representer.dumper.resolver.resolve(ScalarNode, data, (True, False))
        return representer.represent_scalar(tag, data)
    return representer.represent_str(data)


_MachineFileRepresenter.add_representer(str, _represent_str)


def write_machine_file(path: Path | str, mapping: Mapping) -> Path:
    """Write a machine mapping as kerncraft YAML, atomically (a temporary file, then os.replace)."""
    path = Path(path)
    missing = [key for key in REQUIRED if key not in mapping]
    if missing:
        raise HybridtuneError(f"machine mapping for {path} lacks {', '.join(missing)}")
    data = dict(mapping)
    for key in ("in-core model", "compiler"):
        if isinstance(data.get(key), Mapping):
            data[key] = _block_omap(data[key])
    if isinstance(data.get("probe notes"), (list, tuple)):
        notes = CommentedSeq(data["probe notes"])
        notes.fa.set_block_style()
        data["probe notes"] = notes
    writer = YAML(typ="rt")
    writer.Representer = _MachineFileRepresenter
    writer.default_flow_style = None
    writer.width = 100
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise HybridtuneError(f"cannot write machine file {path}: {exc}") from None
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write("# kerncraft machine file written by hybridtune's machine probe\n")
            writer.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else 0o644)   # mkstemp: 0600
        os.replace(temp, path)
    except (OSError, YAMLError, TypeError, ValueError) as exc:
        Path(temp).unlink(missing_ok=True)
        raise HybridtuneError(f"cannot write machine file {path}: {exc}") from None
    return path
