"""Machine descriptions in kerncraft's machine-file format, read for the facts later stages need."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hybridtune.describe.source import Node, Source

REQUIRED = ("model name", "clock", "sockets", "cores per socket", "cacheline size",
            "memory hierarchy", "FLOPs per cycle", "in-core model")
# kerncraft names a folder after its compiler's flags, at most 255 bytes: where a probed target is
# longer, `compiler` holds a short form for kerncraft and this key (which kerncraft ignores) the
# whole target, which hybridtune's analyses use
OWN_COMPILER = "hybridtune compiler"
_UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([kMGT]?)(i?)(B|Hz|B/s)?\s*$")


@dataclass(frozen=True)
class CacheLevel:
    name: str
    size_bytes: float | None     # per group; None for main memory
    groups: int | None
    cores_per_group: int | None
    upstream_bytes_per_cycle: float | None = None   # where the file gives it as a number


@dataclass(frozen=True)
class Machine:
    name: str
    clock_hz: float
    sockets: int
    cores_per_socket: int
    cores_per_numa_domain: int
    cacheline_bytes: int
    levels: tuple
    in_core_models: tuple        # ((tool, arch), ...)
    path: str = ""
    sha256: str = ""
    compilers: tuple = ()        # ((compiler, flags), ...) hybridtune's kerncraft analyses build with
    dp_flops_per_cycle: float = 0.0   # FLOPs per cycle, DP total (0 where the file lacks it)

    @property
    def compiles_for_any_host(self) -> bool:
        """Whether kerncraft builds for the CPU the file names, not for the CPU it runs on."""
        return not any("-march=native" in flags.split() or "-xHost" in flags.split()
                       for _, flags in self.compilers)

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket


def _quantity(node: Node, unit: str) -> float:
    value = _magnitude(node, unit)
    if not 0 < value < math.inf:
        raise node.error(f"a positive, finite quantity in {unit}")
    return value


def _magnitude(node: Node, unit: str) -> float:
    text = node.value
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        try:
            return float(text)
        except OverflowError:   # an integer beyond the largest double
            return math.inf
    match = _QUANTITY.match(str(text)) if isinstance(text, str) else None
    if not match or (match.group(4) or unit) != unit:
        raise node.error(f"a quantity in {unit} such as '2.4 G{unit}'" if unit == "Hz"
                         else f"a quantity in {unit} such as '32.00 kB'")
    number, prefix, binary, _ = match.groups()
    scale = (1024 ** " kMGT".index(prefix)) if binary else _UNITS[prefix]
    return float(number) * scale


def _cacheline(node: Node) -> int:
    size = int(_quantity(node, "B"))
    if size < 1:
        raise node.error("a cache line of at least 1 B")
    return size


def _cache_size(item: Node) -> float | None:
    """sets x ways x line size from 'cache per group', where 'size per group' is left empty."""
    cache = item.value.get("cache per group")
    if not isinstance(cache, dict):
        return None
    node = item.child("cache per group")
    values = []
    for key in ("sets", "ways", "cl_size"):
        if key not in cache:
            raise node.error(f"'{key}' in 'cache per group'", key_suffix="." + key)
        values.append(node.child(key).integer(minimum=1))
    try:
        return float(values[0] * values[1] * values[2])
    except OverflowError:
        raise node.error("sets x ways x cl_size within the range of a double") from None


def _python_tag(value) -> str | None:
    """The first Python object tag in a YAML tree, if any."""
    tag = getattr(getattr(value, "tag", None), "value", None)
    if isinstance(tag, str) and "python/" in tag:
        return tag
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        found = _python_tag(child)
        if found:
            return found
    return None


def parse_machine(source: Source) -> Machine:
    root = Node.root(source)
    tag = _python_tag(root.value)
    if tag:   # kerncraft reads machine files with ruamel's unsafe loader, which would run it
        raise root.error(f"a machine file without Python object tags (found {tag})")
    if not isinstance(root.value, dict):
        raise root.error("a kerncraft machine file (a mapping)")
    for key in REQUIRED:
        if key not in root.value:
            raise root.error(f"the key '{key}' of kerncraft's machine-file format (missing)",
                             key_suffix=key)
    fields = {key: root.child(key) for key in root.value if isinstance(key, str)}
    if "schema_version" in fields and (fields["schema_version"].value != 1
                                       or isinstance(fields["schema_version"].value, bool)):
        raise fields["schema_version"].error("schema_version 1")
    sockets = fields["sockets"].integer(minimum=1)
    per_socket = fields["cores per socket"].integer(minimum=1)
    per_numa = fields["cores per NUMA domain"].integer(minimum=1) \
        if "cores per NUMA domain" in fields else per_socket
    levels = []
    for item in fields["memory hierarchy"].sequence(min_len=2):
        if not isinstance(item.value, dict) or "level" not in item.value:
            raise item.error("a memory level with a 'level' name")
        name = item.child("level").string()
        size = _quantity(item.child("size per group"), "B") \
            if item.value.get("size per group") is not None else _cache_size(item)
        groups = item.child("groups").integer(minimum=1) if "groups" in item.value else None
        cpg = item.child("cores per group").integer(minimum=1) \
            if "cores per group" in item.value else None
        levels.append(CacheLevel(name, size, groups, cpg, _throughput(item.value)))
    if levels[-1].size_bytes is not None:
        raise fields["memory hierarchy"].error("a last level without 'size per group' (MEM)")
    in_core = fields["in-core model"]
    if not isinstance(in_core.value, dict):
        raise in_core.error("a mapping of in-core tools to architectures, e.g. OSACA: SKX")
    models = tuple((str(k), str(v)) for k, v in in_core.value.items())
    return Machine(fields["model name"].string(), _quantity(fields["clock"], "Hz"), sockets,
                   per_socket, per_numa, _cacheline(fields["cacheline size"]),
                   tuple(levels), models, source.path, source.sha256,
                   _compilers(fields.get(OWN_COMPILER, fields.get("compiler"))),
                   _dp_flops(fields["FLOPs per cycle"].value))


def _throughput(level: dict) -> float | None:
    """A level's upstream throughput in bytes per cycle where it is given as 'X B/cy'."""
    value = level.get("upstream throughput")
    first = value[0] if isinstance(value, list) and value else None
    match = re.match(r"^\s*([0-9.]+)\s*B/cy", first) if isinstance(first, str) else None
    return float(match.group(1)) if match else None


def _dp_flops(value) -> float:
    total = value.get("DP", {}).get("total") if isinstance(value, dict) else None
    return float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else 0.0


def _compilers(node: Node | None) -> tuple:
    """kerncraft's `compiler` entry, a mapping or a list of one-key mappings, as (name, flags)."""
    if node is None:
        return ()
    entries = node.value if isinstance(node.value, list) else [node.value]
    pairs = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise node.error("compilers with their flags, e.g. gcc: -O3 -march=skylake-avx512")
        pairs += [(str(name), str(flags)) for name, flags in entry.items()]
    return tuple(pairs)
