"""Each level's bandwidth as a machine file composes it for a load stream, against the measured one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from hybridtune.errors import HybridtuneError

_UNIT = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kMGT]?)(B/cy|B/s|Hz|B)\s*")


@dataclass(frozen=True)
class LevelCheck:
    """One level: the 1-core load bandwidth the file implies, the measured one and file / measured."""
    level: str
    file_Bps: float | None        # None for L1: the file leaves its throughput to the in-core model
    measured_Bps: float
    cycles_per_line: float | None
    how: str

    @property
    def ratio(self) -> float | None:
        return None if self.file_Bps is None else self.file_Bps / self.measured_Bps


def quantity(text, unit: str) -> float:
    """'2.6 GHz', '13.606 GB/s', '64.00 B/cy' as a number in the given unit ('Hz', 'B/s', 'B/cy')."""
    match = _QUANTITY.fullmatch(str(text))
    if not match or match.group(3) != unit:
        raise HybridtuneError(f"bandwidth check: {text!r} is not a quantity in {unit}")
    return float(match.group(1)) * _UNIT[match.group(2)]


def check_bandwidths(machine: Mapping) -> tuple:
    """A LevelCheck per memory level of a probed machine file (plain data as the probe returns it).

    The file's side composes cycles per cache line as kerncraft's ECM model does for one core and one
    load stream resident in that level: the in-core term (taken as the measured L1 load, since the
    file leaves L1 to the in-core model), one line over each upstream throughput up to the level
    (summed, or the largest where transfers overlap), and for memory the line over the bandwidth
    kerncraft picks for the ECM model (the load kernel's best over the cores of one group and NUMA
    domain). The measured side is the 1-core load kernel's result at the level.
    """
    clock = quantity(machine["clock"], "Hz")
    line = quantity(machine["cacheline size"], "B")
    hierarchy = machine["memory hierarchy"]
    rows = machine["benchmarks"]["measurements"]
    measured = {entry["level"]: quantity(rows[entry["level"]][1]["results"]["load"][
        rows[entry["level"]][1]["cores"].index(1)], "B/s") for entry in hierarchy}
    checks = []
    core = line * clock / measured[hierarchy[0]["level"]]
    terms = [core]
    checks.append(LevelCheck(hierarchy[0]["level"], None, measured[hierarchy[0]["level"]], None,
                             "in-core model"))
    for entry in hierarchy[1:]:
        name = entry["level"]
        throughput = entry["upstream throughput"][0]
        if throughput == "full socket memory bandwidth":
            row = rows[name][1]
            usable = min(entry["cores per group"], machine["cores per NUMA domain"])
            best = max(quantity(v, "B/s") for c, v in zip(row["cores"], row["results"]["load"])
                       if c <= usable)
            terms.append(line * clock / best)
            how = f"memory: the load kernel's best up to {usable} cores, {best / 1e9:.3f} GB/s"
        else:
            terms.append(line / quantity(throughput, "B/cy"))
            how = f"upstream {throughput}"
        cycles = max(terms) if entry.get("transfers overlap") else sum(terms)
        checks.append(LevelCheck(name, line * clock / cycles, measured[name], cycles, how))
    return tuple(checks)


def check_lines(checks: tuple) -> list:
    """The check as summary lines, one per level."""
    lines = ["bandwidth check (1 core, load stream): level, the file's, measured, file / measured"]
    for check in checks:
        if check.file_Bps is None:
            lines.append(f"  {check.level:4} {'in-core':>13} {check.measured_Bps / 1e9:9.2f} GB/s"
                         f"      -   (the file leaves {check.level} to the in-core model)")
        else:
            lines.append(f"  {check.level:4} {check.file_Bps / 1e9:8.2f} GB/s "
                         f"{check.measured_Bps / 1e9:9.2f} GB/s {check.ratio:6.2f}   "
                         f"({check.cycles_per_line:.2f} cy/CL; {check.how})")
    return lines
