"""The in-core side of a machine file: OSACA architecture, ports and FLOPs per cycle from CPU flags."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hybridtune.errors import HybridtuneError


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
