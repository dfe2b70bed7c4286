"""Facts about this host from /proc, /sys and lscpu: topology, caches, clock and CPU flags."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hybridtune.errors import HybridtuneError


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


def host_summary(facts: HostFacts) -> dict:
    """What a benchmark names its host by: the CPU, its cores, each data cache level's size (one
    cache), whether a hypervisor runs it, the host's name and kernel."""
    return {"model": facts.model_name, "vendor": facts.vendor, "cores": facts.cores,
            "cpus": os.cpu_count(), "usable_cores": facts.usable_cores,
            **{f"l{cache.level}_bytes": cache.size_bytes for cache in facts.caches},
            "hypervisor": "hypervisor" in facts.flags, "hostname": platform.node(),
            "kernel": platform.release()}
