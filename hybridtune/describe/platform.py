"""A SimGrid platform file read for what the analytic model needs: its hosts and its routes.

A route between two hosts gives their latency and bandwidth.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from hybridtune.errors import HybridtuneError

# SimGrid's units (src/surf/xml/surf_xml_parse.cpp): bandwidth in bytes or bits per second,
# latency in seconds, speed in flop/s, each with SI and binary prefixes.
_PREFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40}
_TIME = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6,
         "ns": 1e-9, "ps": 1e-12}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


class PlatformError(HybridtuneError):
    """A platform file that cannot be read: the message names the file, the line and what is wrong."""


def _split(text: str, where: str) -> tuple[float, str]:
    match = _NUMBER.match(text or "")
    if not match:
        raise PlatformError(f"{where}: {text!r} is not a number with a unit")
    return float(match.group(1)), match.group(2)


def bandwidth_bytes_per_s(text: str, where: str) -> float:
    """'10GBps' (bytes) or '100Gbps' (bits) per second, in bytes per second."""
    value, unit = _split(text, where)
    for suffix, scale in (("Bps", 1.0), ("bps", 0.125)):
        if unit.endswith(suffix) and unit[:-len(suffix)] in _PREFIXES:
            return value * _PREFIXES[unit[:-len(suffix)]] * scale
    if unit == "":
        return value
    raise PlatformError(f"{where}: bandwidth {text!r} needs a unit such as 12.5GBps or 100Gbps")


def latency_s(text: str, where: str) -> float:
    value, unit = _split(text, where)
    if unit in _TIME or unit == "":
        return value * _TIME.get(unit, 1.0)
    raise PlatformError(f"{where}: latency {text!r} needs a unit such as 1us or 0.5us")


def speed_flops(text: str, where: str) -> float:
    """The first of a host's speeds ('20Gf', '1.5Gf,1Gf' for power states) in flop/s."""
    value, unit = _split(text.split(",")[0], where)
    if unit.endswith("f") and unit[:-1] in _PREFIXES:
        return value * _PREFIXES[unit[:-1]]
    raise PlatformError(f"{where}: speed {text!r} needs a unit such as 20Gf")


def radical_ids(text: str, where: str) -> list[int]:
    """A cluster's radical '0-255' or '0-3,8,10-11' as its ids."""
    ids: list[int] = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            first, last = int(bounds[0]), int(bounds[-1])
        except ValueError:
            raise PlatformError(f"{where}: radical {text!r} is not like 0-255") from None
        if len(bounds) > 2 or last < first:
            raise PlatformError(f"{where}: radical {text!r} is not like 0-255")
        ids.extend(range(first, last + 1))
    return ids


@dataclass(frozen=True)
class Platform:
    """One cluster of a SimGrid platform file: hosts joined by private links (lat, bw) to a
    backbone (FLAT) or to the switches of a fat tree (FAT_TREE, topo_parameters
    'levels;down;up;links')."""
    path: str
    cluster: str
    hosts: tuple
    speed_flops: float
    latency_s: float
    bandwidth_bytes_per_s: float
    backbone_latency_s: float = 0.0
    backbone_bandwidth_bytes_per_s: float = math.inf
    topology: str = "FLAT"
    topo_parameters: str = ""
    cores: int = 1

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def levels(self) -> int:
        """Switch levels a message climbs between two hosts furthest apart (1 for a flat
        cluster's backbone)."""
        if self.topology == "FAT_TREE":
            return int(self.topo_parameters.split(";")[0])
        return 1

    def leaf_hosts(self) -> int:
        """Hosts under one leaf switch of a fat tree (all hosts of a flat cluster)."""
        if self.topology == "FAT_TREE":
            return int(self.topo_parameters.split(";")[1].split(",")[0])
        return len(self.hosts)

    def route(self, neighbours: bool = False) -> tuple[float, float]:
        """(latency s, bandwidth bytes/s) of a message between two hosts: the furthest apart,
        or two neighbours (consecutive hosts, under one switch of a fat tree)."""
        if self.topology == "FAT_TREE":
            hops = 2 if neighbours else 2 * self.levels()
            return hops * self.latency_s, self.bandwidth_bytes_per_s
        return (2 * self.latency_s + self.backbone_latency_s,
                min(self.bandwidth_bytes_per_s, self.backbone_bandwidth_bytes_per_s))

    def check_ranks(self, ranks: int) -> None:
        if ranks > len(self.hosts):
            raise PlatformError(f"{self.path}: {ranks} ranks asked, the platform has "
                                f"{len(self.hosts)} hosts (one rank per host)")


def _line_of(error: ElementTree.ParseError) -> int:
    return error.position[0] if getattr(error, "position", None) else 0


def load_platform(path: str | Path) -> Platform:
    """The first <cluster> of a SimGrid platform file; a file that is not XML, or has no cluster
    or a cluster without its attributes, is refused with the file and line."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise PlatformError(f"platform file {path}: {exc.strerror}") from None
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise PlatformError(f"platform file {path}, line {_line_of(exc)}: not XML ({exc})") from None
    if root.tag != "platform":
        raise PlatformError(f"platform file {path}: the root element is <{root.tag}>, SimGrid "
                            "expects <platform version=\"4.1\">")
    if not (text.lstrip().startswith("<?xml") and "<!DOCTYPE platform" in text):
        raise PlatformError(f"platform file {path}, line 1: SimGrid needs the prolog <?xml "
                            "version='1.0'?> and <!DOCTYPE platform SYSTEM "
                            "\"https://simgrid.org/simgrid.dtd\"> before <platform>")
    cluster = root.find(".//cluster")
    if cluster is None:
        raise PlatformError(f"platform file {path}: no <cluster> element (a cluster of identical "
                            "hosts is what the analytic model reads)")
    line = _cluster_line(text)
    where = f"platform file {path}, line {line}, <cluster>"
    attributes = cluster.attrib
    for key in ("id", "prefix", "suffix", "radical", "speed", "bw", "lat"):
        if key not in attributes:
            raise PlatformError(f"{where}: attribute {key!r} is missing")
    hosts = tuple(f"{attributes['prefix']}{i}{attributes['suffix']}"
                  for i in radical_ids(attributes["radical"], where))
    topology = attributes.get("topology", "FLAT")
    if topology not in ("FLAT", "FAT_TREE"):
        raise PlatformError(f"{where}: topology {topology!r}; the analytic model knows FLAT and "
                            "FAT_TREE")
    parameters = attributes.get("topo_parameters", "")
    if topology == "FAT_TREE" and not re.match(r"^[1-9]\d*;", parameters):   # at least 1 level
        raise PlatformError(f"{where}: a FAT_TREE needs topo_parameters 'levels;down;up;links'")
    return Platform(
        str(path), attributes["id"], hosts, speed_flops(attributes["speed"], where),
        latency_s(attributes["lat"], where), bandwidth_bytes_per_s(attributes["bw"], where),
        latency_s(attributes["bb_lat"], where) if "bb_lat" in attributes else 0.0,
        bandwidth_bytes_per_s(attributes["bb_bw"], where) if "bb_bw" in attributes else math.inf,
        topology, parameters, _cores(attributes.get("core", "1"), where))


def _cores(text: str, where: str) -> int:
    """A cluster's core count per host: a whole number of at least 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise PlatformError(f"{where}: core {text!r} is not a core count such as 40")
    return int(text)


def _cluster_line(text: str) -> int:
    """The line of the first <cluster> element (not of a comment or text that names one)."""
    parser = expat.ParserCreate()
    lines: list[int] = []

    def start(name, _attributes) -> None:
        if name == "cluster" and not lines:
            lines.append(parser.CurrentLineNumber)
    parser.StartElementHandler = start
    try:
        parser.Parse(text, True)
    except expat.ExpatError:
        pass                        # ElementTree read the file already: not reached
    return lines[0] if lines else 0
