"""The machine probe: host facts, OSACA model choice, footprints, the written file and kerncraft on it."""

from __future__ import annotations

import dataclasses
import io
import math
import re
import shutil
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hybridtune.describe.loader import load
from hybridtune.errors import HybridtuneError
from hybridtune.predict import kerncraft_adapter
from hybridtune.probe.core_model import (choose_osaca_architecture, flops_per_cycle,
                                           osaca_architectures, port_model)
from hybridtune.probe.host_facts import CacheFacts, HostFacts, read_host_facts
from hybridtune.probe.machine_file import write_machine_file
from hybridtune.probe.bandwidth import (BENCH_KERNELS, MEMORY_FACTOR, MEMORY_SHARE_LIMIT,
                                        BandwidthPoint, level_footprints, measure_bandwidth)
from hybridtune.probe.machine_probe import GCC_FLAGS, probe_machine
from hybridtune.probe.target import portable_target, resolved_target
from tests_support import SHARED_MACHINES

KIB, MIB = 1 << 10, 1 << 20
TRIAD = """double a[N], b[N], c[N];
double s;
for (int i = 0; i < N; ++i)
    a[i] = b[i] + s * c[i];
"""
SHARED_FILES = sorted(SHARED_MACHINES.glob("*.yml"))
QUIET_KERNCRAFT = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                             "ignore::PendingDeprecationWarning")


@lru_cache(maxsize=None)
def published(name: str) -> dict:
    return YAML(typ="rt").load((SHARED_MACHINES / name).read_text())


def kerncraft_predict(machine_path: Path, kernel_path: Path, model_name: str, n: int) -> dict:
    """One kerncraft model of one kernel, in-process, as its command line would run it (with the
    adapter's run-time patches, which let any length of compiler flags through)."""
    from kerncraft import models
    from kerncraft.kerncraft import create_parser
    from kerncraft.kernel import KernelCode
    from kerncraft.machinemodel import MachineModel
    from kerncraft.pycparser_utils import clean_code

    kerncraft_adapter.patch_kerncraft()
    parser = create_parser()
    args = parser.parse_args(["-m", str(machine_path), "-p", model_name, str(kernel_path),
                              "-D", "N", str(n), "-i", "OSACA", "-P", "LC", "--unit", "cy/CL"])
    args.machine.close()
    args.code_file.close()
    machine = MachineModel(str(machine_path), args=args)
    kernel = KernelCode(clean_code(kernel_path.read_text()), filename=str(kernel_path),
                        machine=machine, keep_intermediates=True)
    kernel.set_constant("N", n)
    model = getattr(models, model_name)(kernel, machine, args, parser)
    try:
        model.analyze()
        model.report(output_file=io.StringIO())
    except SystemExit as exc:
        pytest.fail(f"kerncraft {model_name} exited ({exc.code}) with {machine_path.name}")
    return model.results


PREFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def written_bytes(text: str) -> tuple[float, float]:
    """A size as the machine file writes it ('342.600788 MB'): its value in bytes, and half a unit
    of its last written digit, the most the writer's rounding may have moved it."""
    number, unit = text.split()
    scale = PREFIXES.get(unit[0], 1.0) if len(unit) > 1 else 1.0
    decimals = len(number.partition(".")[2])
    return float(number) * scale, 0.5 * 10.0 ** -decimals * scale


def assert_written_as(text: str, size: float) -> None:
    """The written size is `size` to the precision it is written with (the probe keeps six
    decimals of the largest decimal prefix, and fewer where they are zeros)."""
    value, half_unit = written_bytes(text)
    assert abs(value - size) <= half_unit * (1 + 1e-9), (text, size)


def triad_length_beyond_caches(machine_path: Path) -> int:
    """N for the triad whose three arrays together are 4 times the machine's whole last level
    cache, and at least 10^7: its memory term is then not 0 on any host."""
    last = load(machine_path).levels[-2]
    return max(10_000_000, math.ceil(4 * last.size_bytes * (last.groups or 1) / (3 * 8)))


# ---------------------------------------------------------------- facts

def test_host_facts_are_consistent():
    facts = read_host_facts()
    assert facts.cores >= 1 and facts.threads_per_core >= 1 and facts.usable_cores >= 1
    assert 0.5e9 < facts.clock_hz < 6e9 and facts.clock_source
    assert [c.level for c in facts.caches] == sorted(c.level for c in facts.caches)
    assert facts.caches[0].level == 1
    for cache in facts.caches:
        assert cache.sets * cache.ways * cache.line_bytes == cache.size_bytes, cache
        assert cache.cores_per_group * cache.groups == facts.cores, cache
    sizes = [c.size_bytes for c in facts.caches]
    assert sizes == sorted(sizes)
    assert facts.model_name and facts.flags


def test_lscpu_and_sysfs_agree_on_the_topology():
    with_lscpu, from_sysfs = read_host_facts(), read_host_facts(use_lscpu=False)
    assert with_lscpu.topology_source == "lscpu"
    assert from_sysfs.topology_source.startswith("/sys")
    for field in ("sockets", "cores_per_socket", "threads_per_core", "numa_domains"):
        assert getattr(with_lscpu, field) == getattr(from_sysfs, field), field


def _fake_root(tmp_path: Path) -> Path:
    """A two-socket Sapphire-Rapids-like host with SMT, as /proc and /sys show it."""
    root = tmp_path / "root"
    flags = "fpu sse2 avx avx2 fma avx512f avx512_vnni avx512_vbmi2 amx_tile"
    blocks = [f"processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
              f"model name\t: Intel(R) Xeon(R) Platinum 8480 CPU @ 2.00GHz\ncpu MHz\t\t: 3100.0\n"
              f"flags\t\t: {flags}\n" for cpu in range(8)]
    (root / "proc").mkdir(parents=True)
    (root / "proc/cpuinfo").write_text("\n".join(blocks))
    (root / "proc/meminfo").write_text("MemTotal: 1000 kB\nMemAvailable: 800000 kB\n")
    base = root / "sys/devices/system/cpu"
    base.mkdir(parents=True)
    (base / "online").write_text("0-7\n")
    for cpu in range(8):
        package, core = cpu // 4, cpu % 2          # siblings: cpu and cpu + 2 share a core
        topology = base / f"cpu{cpu}/topology"
        topology.mkdir(parents=True)
        (topology / "physical_package_id").write_text(f"{package}\n")
        (topology / "core_id").write_text(f"{core}\n")
    caches = [(1, "Data", "48K", 64, 12, "0,2"), (1, "Instruction", "32K", 64, 8, "0,2"),
              (2, "Unified", "2048K", 2048, 16, "0,2"), (3, "Unified", "4M", 4096, 16, "0-3")]
    for index, (level, kind, size, sets, ways, shared) in enumerate(caches):
        folder = base / f"cpu0/cache/index{index}"
        folder.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size),
                            ("number_of_sets", sets), ("ways_of_associativity", ways),
                            ("coherency_line_size", 64), ("shared_cpu_list", shared)):
            (folder / name).write_text(f"{value}\n")
    for node in (0, 1):
        (root / f"sys/devices/system/node/node{node}").mkdir(parents=True)
    thp = root / "sys/kernel/mm/transparent_hugepage"
    thp.mkdir(parents=True)
    (thp / "enabled").write_text("[always] madvise never\n")
    return root


def test_facts_from_a_fake_tree(tmp_path):
    facts = read_host_facts(_fake_root(tmp_path))
    assert (facts.sockets, facts.cores_per_socket, facts.threads_per_core) == (2, 2, 2)
    assert facts.numa_domains == 2 and facts.usable_cores == 4
    assert facts.clock_hz == 2.0e9 and "model name" in facts.clock_source
    assert facts.vendor == "GenuineIntel" and "amx_tile" in facts.flags
    assert facts.transparent_hugepage == "always"
    assert facts.available_memory_bytes == 800000 * 1024
    assert [(c.level, c.size_bytes, c.cores_per_group, c.groups) for c in facts.caches] == [
        (1, 48 * KIB, 1, 4), (2, 2 * MIB, 1, 4), (3, 4 * MIB, 2, 2)]
    arch, note = choose_osaca_architecture(facts.vendor, facts.cpu_family, facts.flags,
                                           osaca_architectures())
    assert arch == "SPR" and "AMX" in note


def test_a_tree_without_x86_flags_is_refused(tmp_path):
    root = tmp_path / "arm"
    (root / "proc").mkdir(parents=True)
    (root / "proc/cpuinfo").write_text("processor\t: 0\nFeatures\t: fp asimd\nCPU part\t: 0xd0c\n")
    with pytest.raises(HybridtuneError, match="x86"):
        read_host_facts(root)


# ---------------------------------------------------------------- in-core model

ALL = {"ZEN1", "ZEN2", "ZEN3", "ZEN4", "SNB", "IVB", "HSW", "BDW", "SKX", "CSX", "ICX", "SPR"}


@pytest.mark.parametrize("vendor, flags, available, expected, nearest", [
    ("AuthenticAMD", "avx2 fma vaes avx512f", ALL, "ZEN4", False),
    ("AuthenticAMD", "avx2 fma vaes clwb", ALL, "ZEN3", False),
    ("AuthenticAMD", "avx2 fma clwb", ALL, "ZEN2", False),
    ("AuthenticAMD", "avx2 fma vaes avx512f", ALL - {"ZEN4"}, "ZEN3", True),
    ("GenuineIntel", "avx2 fma avx512f amx_tile", ALL, "SPR", False),
    ("GenuineIntel", "avx2 fma avx512f amx_tile", ALL - {"SPR"}, "ICX", True),
    ("GenuineIntel", "avx2 fma avx512f amx_tile", {"SKX", "HSW"}, "SKX", True),
    ("GenuineIntel", "avx2 fma avx512f avx512_vbmi2", ALL, "ICX", False),
    ("GenuineIntel", "avx2 fma avx512f avx512_vnni", ALL, "CSX", False),
    ("GenuineIntel", "avx2 fma avx512f", ALL, "SKX", False),
    ("GenuineIntel", "avx2 fma adx", ALL, "BDW", False),
    ("GenuineIntel", "avx2 fma", ALL, "HSW", False),
    ("GenuineIntel", "avx f16c", ALL, "IVB", False),
])
def test_osaca_model_from_vendor_and_flags(vendor, flags, available, expected, nearest):
    arch, note = choose_osaca_architecture(vendor, 25, flags.split(), available)
    assert arch == expected
    assert ("nearest" in note) == nearest, note


def test_no_matching_osaca_model_is_an_error():
    with pytest.raises(HybridtuneError, match="none of ZEN3"):
        choose_osaca_architecture("AuthenticAMD", 25, ["avx2", "vaes"], {"SKX"})


def test_installed_osaca_has_the_models_kerncraft_files_name():
    assert {"ZEN2", "ZEN3", "ZEN4", "SKX", "HSW", "IVB", "SPR"} <= set(osaca_architectures())


@pytest.mark.parametrize("arch, name", [("SKX", "SkylakeSP_Gold-6148.yml"),
                                        ("HSW", "HaswellEP_E5-2695v3.yml"),
                                        ("IVB", "IvyBridgeEP_E5-2660v2.yml"),
                                        ("ZEN2", "Zen2_EPYC-7452.yml")])
def test_port_model_matches_the_published_files(arch, name):
    overlapping, non_overlapping, _ = port_model(arch)
    machine = published(name)
    assert non_overlapping == list(machine["non-overlapping model"]["ports"]["OSACA"])
    assert not set(overlapping) & set(non_overlapping)
    if arch != "ZEN2":      # the published Zen 2 file leaves port 0 out of its overlapping ports
        assert overlapping == list(machine["overlapping model"]["ports"]["OSACA"])


@pytest.mark.parametrize("arch, flags, name", [("SKX", "avx avx2 fma avx512f", "SkylakeSP_Gold-6148.yml"),
                                               ("HSW", "avx avx2 fma", "HaswellEP_E5-2695v3.yml"),
                                               ("IVB", "avx f16c", "IvyBridgeEP_E5-2660v2.yml"),
                                               ("ZEN2", "avx avx2 fma", "Zen2_EPYC-7452.yml")])
def test_peak_flops_match_the_published_files(arch, flags, name):
    ours = flops_per_cycle(arch, flags.split())
    theirs = published(name)["FLOPs per cycle"]
    assert ours["DP"]["total"] == theirs["DP"]["total"]
    assert ours["SP"]["total"] == theirs["SP"]["total"]


def test_avx2_only_halves_an_avx512_core():
    assert flops_per_cycle("SKX", ["avx", "avx2", "fma"])["DP"]["total"] == 16
    assert flops_per_cycle("ZEN3", ["avx", "avx2"])["DP"] == {"FMA": 0, "ADD": 8, "MUL": 8,
                                                               "total": 16}


# ---------------------------------------------------------------- footprints and the file

def small_host(real: HostFacts) -> HostFacts:
    """The real host with caches small enough that a real benchmark run takes a second or two."""
    cores = real.cores
    caches = (CacheFacts(1, 16 * KIB, 32, 8, 64, 1, cores), CacheFacts(2, 128 * KIB, 256, 8, 64, 1, cores),
              CacheFacts(3, MIB, 1024, 16, 64, cores, 1))
    return dataclasses.replace(real, caches=caches)


def test_footprints_lie_inside_each_level():
    facts = read_host_facts()
    cores = list(range(1, min(facts.cores_per_socket, facts.usable_cores) + 1))
    plan, _ = level_footprints(facts, cores)
    assert list(plan) == [f"L{c.level}" for c in facts.caches] + ["MEM"]
    for index, c in enumerate(cores):
        below = 0
        for cache in facts.caches:
            capacity = cache.size_bytes * math.ceil(c / cache.cores_per_group)
            footprint = plan[f"L{cache.level}"][index]
            assert below < footprint < capacity, (cache, c, footprint)
            below = capacity
        last = facts.caches[-1]
        beyond = MEMORY_FACTOR * last.size_bytes * last.groups // facts.sockets
        limit = int(MEMORY_SHARE_LIMIT * facts.available_memory_bytes)
        assert plan["MEM"][index] == (min(beyond, limit) if limit else beyond)


def synthetic_benchmark(calls: list):
    """Bandwidth falling with the footprint, rising with threads, distinct per kernel; three samples."""
    speed = {k.name: 1.0 + 0.1 * i for i, k in enumerate(BENCH_KERNELS)}

    def run(kernel, threads, footprints):
        calls.append((kernel, threads, list(footprints)))
        points = []
        for footprint in footprints:
            best = speed[kernel] * threads * 4e12 / (footprint ** 0.5)
            points.append(BandwidthPoint(footprint, 0.9 * best, (0.8 * best, best, 0.9 * best)))
        return points
    return run


@QUIET_KERNCRAFT
def test_probe_with_a_synthetic_benchmark_writes_a_kerncraft_file(tmp_path):
    from kerncraft.machinemodel import MachineModel

    facts = read_host_facts()
    calls = []
    mapping = probe_machine(facts, synthetic_benchmark(calls), rounds=2)
    cores = list(range(1, min(facts.cores_per_socket, facts.usable_cores) + 1))
    # one load call first: does the last level's footprint load faster than memory (here it does)
    assert len(calls) == 1 + 2 * len(BENCH_KERNELS) * len(cores)
    clock_hz = float(mapping["clock"].split()[0]) * 1e9
    plan, _ = level_footprints(facts, cores)
    assert calls[0] == ("load", 1, [plan[f"L{facts.caches[-1].level}"][0], plan["MEM"][0]])
    path = write_machine_file(tmp_path / "probed.yml", mapping)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probed.yml"]
    assert f"clock: {mapping['clock']}\n" in path.read_text()     # plain, though kerncraft is loaded

    machine = MachineModel(str(path))
    assert float(machine["clock"]) == pytest.approx(clock_hz, rel=1e-3)
    assert float(machine["nominal clock"]) == pytest.approx(facts.clock_hz, rel=1e-3)
    assert machine["in-core model"]["OSACA"] in osaca_architectures()
    assert machine["cores per socket"] == facts.cores_per_socket
    hierarchy = machine["memory hierarchy"]
    assert [level["level"] for level in hierarchy] == list(plan)
    for level, written, cache in zip(hierarchy, mapping["memory hierarchy"], facts.caches):
        assert float(level["size per group"]) == written_bytes(written["size per group"])[0]
        assert_written_as(written["size per group"], cache.size_bytes)
        policy = level["cache per group"]
        assert policy["sets"] * policy["ways"] * policy["cl_size"] == cache.size_bytes
    measured = machine["benchmarks"]["measurements"]
    for name, totals in plan.items():
        row = measured[name][1]
        assert row["cores"] == cores
        written = mapping["benchmarks"]["measurements"][name][1]["total size"]
        assert [float(t) for t in row["total size"]] == [written_bytes(w)[0] for w in written]
        for text, total in zip(written, totals):
            assert_written_as(text, total)
        for kernel in BENCH_KERNELS:
            expected = [(1.0 + 0.1 * BENCH_KERNELS.index(kernel)) * c * 4e12 / t ** 0.5
                        for c, t in zip(cores, totals)]
            # written in GB/s with three decimals
            assert [float(v) for v in row["results"][kernel.name]] == pytest.approx(
                expected, rel=1e-3, abs=5e5)
            assert all(len(stats) == 2 * 3 for stats in row["stats"][kernel.name])
    # The L2 upstream throughput is the 1-core load kernel's bytes per cycle (overlap) or its
    # increase over L1 (no overlap).
    line = facts.caches[0].line_bytes
    load = [(1.0 + 0.1 * 2) * 4e12 / plan[f"L{c.level}"][0] ** 0.5 for c in facts.caches[:2]]
    cycles = [line * clock_hz / bw for bw in load]
    overlap = hierarchy[1]["transfers overlap"]
    transfer = cycles[1] if overlap else cycles[1] - cycles[0]
    assert float(hierarchy[1]["upstream throughput"][0]) == pytest.approx(line / transfer,
                                                                           abs=0.006)
    bandwidth, kernel = machine.get_bandwidth(len(hierarchy) - 1, 4, 1, 1, cores=1)
    assert kernel == "triad" and float(bandwidth) > 0
    assert any(note.startswith("clock: ") for note in machine["probe notes"])


def _enabled(flags: list) -> set:
    out = subprocess.run(["gcc", *flags, "-Q", "--help=target"], capture_output=True, text=True,
                         check=True).stdout
    return set(re.findall(r"^\s*(-m[a-z0-9.-]+)\s+\[enabled\]", out, re.MULTILINE))


def test_the_file_names_this_cpus_target_not_native():
    target = resolved_target().split()
    assert target[0].startswith("-march=") and target[0] != "-march=native"
    # kerncraft, run on another host, compiles the same instructions as -march=native here
    assert _enabled(target) == _enabled(["-march=native"])
    mapping = probe_machine(read_host_facts(), synthetic_benchmark([]), rounds=1)
    own = mapping.get("hybridtune compiler", mapping["compiler"])    # what hybridtune builds with
    assert own["gcc"].startswith(f"-O3 {' '.join(target)} ")


def test_probe_mapping_loads_in_the_projects_reader(tmp_path):
    import kerncraft.machinemodel  # noqa: F401  (its YAML resolver must not change what we read)

    facts = read_host_facts()
    mapping = probe_machine(facts, synthetic_benchmark([]))
    machine = load(write_machine_file(tmp_path / "m.yml", mapping))
    assert machine.levels[-1].name == "MEM" and machine.levels[-1].size_bytes is None
    assert [level.size_bytes for level in machine.levels[:-1]] == [c.size_bytes for c in facts.caches]
    assert dict(machine.in_core_models)["OSACA"] == mapping["in-core model"]["OSACA"]
    assert machine.cores == facts.cores
    assert machine.clock_hz == pytest.approx(float(mapping["clock"].split()[0]) * 1e9, rel=1e-3)


def test_writing_replaces_atomically_and_refuses_incomplete_mappings(tmp_path):
    mapping = probe_machine(read_host_facts(), synthetic_benchmark([]))
    path = write_machine_file(tmp_path / "m.yml", mapping)
    assert path.stat().st_mode & 0o777 == 0o644
    first = path.read_text()
    changed = dict(mapping, clock="1.5 GHz")
    write_machine_file(path, changed)
    assert "clock: 1.5 GHz" in path.read_text() and path.read_text() != first
    broken = {k: v for k, v in mapping.items() if k != "memory hierarchy"}
    with pytest.raises(HybridtuneError, match="memory hierarchy"):
        write_machine_file(path, broken)
    assert "clock: 1.5 GHz" in path.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["m.yml"]


def test_a_benchmark_giving_too_few_points_is_an_error():
    with pytest.raises(HybridtuneError, match="one positive BandwidthPoint"):
        probe_machine(read_host_facts(), lambda kernel, threads, footprints: [])
    with pytest.raises(HybridtuneError, match="rounds"):
        probe_machine(read_host_facts(), synthetic_benchmark([]), rounds=0)


def test_real_benchmark_on_small_footprints():
    real = read_host_facts()
    points = measure_bandwidth("triad", 1, [16 * KIB, 8 * MIB], samples=3, min_seconds=0.005)
    assert [p.footprint_bytes for p in points] == [16 * KIB, 8 * MIB]
    assert all(len(p.samples_Bps) == 3 and min(p.samples_Bps) <= p.bandwidth_Bps for p in points)
    assert points[0].bandwidth_Bps > points[1].bandwidth_Bps
    mapping = probe_machine(small_host(real), samples=1, min_seconds=0.002, rounds=1)
    memory = mapping["benchmarks"]["measurements"]["MEM"][1]
    assert_written_as(memory["total size"][0], 4 * MIB // real.sockets)
    assert all(float(v.split()[0]) > 0 for v in memory["results"]["triad"])
    with pytest.raises(HybridtuneError, match="unknown probe kernel"):
        measure_bandwidth("stream", 1, [16 * KIB])


# ---------------------------------------------------------------- the real probe and kerncraft

@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    started = time.monotonic()
    mapping = probe_machine()
    seconds = time.monotonic() - started
    folder = tmp_path_factory.mktemp("probed")
    return write_machine_file(folder / "host.yml", mapping), mapping, seconds


@pytest.mark.slow
def test_real_probe_is_quick_and_plausible(probed):
    path, mapping, seconds = probed
    # a bound against a probe that hangs, not a speed target (about 15 s quiet; 173 s on a 2-core
    # VM whose cores other work kept busy)
    assert seconds < 600
    memory = mapping["benchmarks"]["measurements"]["MEM"][1]["results"]
    caches = mapping["benchmarks"]["measurements"]["L1"][1]["results"]
    assert float(caches["load"][0].split()[0]) > float(memory["load"][0].split()[0])
    assert all(float(v.split()[0]) > 0.5 for values in memory.values() for v in values)
    assert load(path).clock_hz == pytest.approx(float(mapping["clock"].split()[0]) * 1e9, rel=1e-3)
    assert mapping["nominal clock"] == f"{read_host_facts().clock_hz / 1e9:.4g} GHz"


@QUIET_KERNCRAFT
@pytest.mark.slow
def test_kerncraft_ecm_and_roofline_run_with_the_probed_file(probed, tmp_path):
    path = probed[0]
    kernel = tmp_path / "triad.c"
    kernel.write_text(TRIAD)
    n = triad_length_beyond_caches(path)
    ecm = kerncraft_predict(path, kernel, "ECM", n)
    assert ecm["T_comp"] > 0 and ecm["memory bandwidth"] > 0
    assert float(ecm["total cycles"]["cy/CL"]) >= ecm["cycles"][-1][1] > 0
    roofline = kerncraft_predict(path, kernel, "RooflineFLOP", n)
    assert roofline["mem bottlenecks"][-1]["bandwidth"] > 0
    assert roofline["bottleneck level"] == len(roofline["mem bottlenecks"]) - 1
    update = tmp_path / "update.c"
    shutil.copy(SHARED_MACHINES / "update.c", update)
    assert kerncraft_predict(path, update, "ECM", 1_000_000)["T_comp"] > 0


@QUIET_KERNCRAFT
@pytest.mark.slow
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.stem)
def test_published_machine_files_run_kerncraft_ecm_unchanged(path, tmp_path):
    from kerncraft.machinemodel import MachineModel

    before = path.read_bytes()
    assert MachineModel(str(path))["memory hierarchy"][-1]["level"] == "MEM"
    kernel = tmp_path / "triad.c"
    kernel.write_text(TRIAD)
    ecm = kerncraft_predict(path, kernel, "ECM", 10_000_000)
    assert ecm["T_comp"] > 0 and float(ecm["total cycles"]["cy/CL"]) > 0
    assert path.read_bytes() == before



# ---------------------------------------------------------------- kerncraft run by hand

KERNCRAFT = Path(sys.executable).parent / "kerncraft"
GCC_TARGET = Path(__file__).resolve().parents[1] / "data" / "probe" / "gcc-target"
RECORDED_HOSTS = {"emerald-rapids": "rocketlake",          # this VM: the whole target fits
                  "emerald-rapids-cooperlake": "cooperlake",   # the same CPU named cooperlake
                  "zen4-gcc12": "znver3"}


def recorded_target(host: str) -> str:
    """-march=native on a recorded host, resolved by the probe's code from gcc's outputs there."""
    return portable_target((GCC_TARGET / f"native-{host}.txt").read_text(),
                           (GCC_TARGET / f"march-{RECORDED_HOSTS[host]}.txt").read_text())


def kerncraft_started(machine: Path, folder: Path) -> subprocess.Popen:
    """`kerncraft -p ECM -m FILE triad.c -D N 1000000`, as a kerncraft user runs it, started."""
    kernel = folder / "triad.c"
    kernel.write_text(TRIAD)
    return subprocess.Popen([str(KERNCRAFT), "-p", "ECM", "-m", str(machine), kernel.name,
                             "-D", "N", "1000000"], cwd=folder, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen) -> subprocess.CompletedProcess:
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def kerncraft_by_hand(machine: Path, folder: Path) -> subprocess.CompletedProcess:
    """kerncraft's command line on this file, run to its end."""
    return finished(kerncraft_started(machine, folder))


@pytest.fixture(scope="module")
def by_hand_on_recorded_hosts(tmp_path_factory) -> dict:
    """Per recorded host, its probed file and kerncraft's command line run on it: the hosts'
    runs side by side (each is a few seconds of OSACA building its parsers)."""
    started = {}
    for host in sorted(RECORDED_HOSTS):
        folder = tmp_path_factory.mktemp(host)
        mapping = probe_machine(read_host_facts(), synthetic_benchmark([]), rounds=1,
                                target=recorded_target(host))
        path = write_machine_file(folder / "host.yml", mapping)
        started[host] = path, kerncraft_started(path, folder)
    done = {}
    try:
        for host, (path, process) in started.items():
            done[host] = path, finished(process)
    finally:
        for _, process in started.values():
            process.kill()
            process.wait()
    return done


@QUIET_KERNCRAFT
@pytest.mark.slow
@pytest.mark.parametrize("host", sorted(RECORDED_HOSTS))
def test_kerncraft_run_by_hand_predicts_with_the_probed_file(host, by_hand_on_recorded_hosts):
    """kerncraft's command line on the file the probe writes for a host of recorded gcc outputs;
    hybridtune's own analyses still build for the whole target."""
    target = recorded_target(host)
    path, done = by_hand_on_recorded_hosts[host]
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    predicted = re.search(r"^perf\. \(cy/CL\) \|\| ([0-9.]+) ", done.stdout, re.MULTILINE)
    assert predicted and float(predicted.group(1)) > 0, done.stdout
    assert load(path).compilers == (("gcc", GCC_FLAGS.format(target=target)),)


@QUIET_KERNCRAFT
@pytest.mark.slow
def test_the_whole_long_target_is_more_than_kerncraft_can_name(tmp_path):
    """Why the probe shortens kerncraft's flags: with the whole target in `compiler` kerncraft's
    command line stops at its folder name."""
    target = recorded_target("emerald-rapids-cooperlake")
    mapping = probe_machine(read_host_facts(), synthetic_benchmark([]), rounds=1, target=target)
    whole = dict(mapping, compiler=mapping["hybridtune compiler"])
    del whole["hybridtune compiler"]
    done = kerncraft_by_hand(write_machine_file(tmp_path / "whole.yml", whole), tmp_path)
    assert done.returncode != 0 and "File name too long" in done.stderr
