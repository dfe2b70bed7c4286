"""Working sets against cache levels: the regions of n for each level, and samples of n in each.

In a level's region of n a loop's data stays in that level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy

from hybridtune.describe.machine import Machine
from hybridtune.generate.size_expressions import N

N_LIMIT = 10 ** 12           # no region border is searched beyond this n
BEYOND_LAST = (2, 8, 32)     # samples past the last cache level, as multiples of its border
SMALLEST_SAMPLE = 64         # kerncraft refuses loops of a few iterations ("unrealistically small")


@dataclass(frozen=True)
class Region:
    """The sizes n (one thread, n_low <= n < n_high) at which a loop's data fits `level` first."""
    level: str
    n_low: int
    n_high: int | None       # None: unbounded (the memory level)
    samples: tuple

    def contains(self, n: float) -> bool:
        return n >= self.n_low and (self.n_high is None or n < self.n_high)


def capacities(machine: Machine, threads: int = 1) -> list[tuple[str, float | None]]:
    """Bytes of each level one of `threads` threads can count on; None for main memory.

    A level shared by c cores is split among the threads that share it.
    """
    out = []
    for level in machine.levels:
        if level.size_bytes is None:
            out.append((level.name, None))
            continue
        sharing = max(1, min(threads, level.cores_per_group or 1))
        out.append((level.name, level.size_bytes / sharing))
    return out


@lru_cache(maxsize=None)
def evaluator(expression):
    """A fast float function of n for a sympy expression in n (memoised per expression)."""
    function = sympy.lambdify(N, expression, modules="math")
    return lambda n: float(function(n))


def border(working_set, capacity: float, n_min: int = 1) -> int | None:
    """The smallest n >= n_min whose working set exceeds capacity (bisection; working sets grow
    with n), or None when none below N_LIMIT does."""
    size = evaluator(working_set)
    if size(n_min) > capacity:
        return n_min
    if size(N_LIMIT) <= capacity:
        return None
    low, high = n_min, N_LIMIT
    while high - low > 1:
        mid = (low + high) // 2
        if size(mid) > capacity:
            high = mid
        else:
            low = mid
    return high


def regions(working_set, machine: Machine, valid=lambda n: n, n_min: int = 1) -> tuple:
    """The loop's regions of n on one thread, each with samples near both borders and inside
    (and a few beyond the last cache level); valid(n) maps a target n to a size the IVP takes."""
    out = []
    low = n_min
    for name, capacity in capacities(machine, 1):
        if capacity is None:
            samples = tuple(sorted({valid(max(n_min, low * k)) for k in BEYOND_LAST}))
            out.append(Region(name, low, None, samples))
            break
        high = border(working_set, capacity, n_min)
        if high is None:
            out.append(Region(name, low, None, _inside(low, low * BEYOND_LAST[-1], valid)))
            break
        if high > low:
            out.append(Region(name, low, high, _inside(low, high, valid)))
            low = high
    return tuple(out)


def _inside(low: int, high: int, valid) -> tuple:
    """Samples near the lower border, in the geometric middle and near the upper border."""
    floor = min(max(low, SMALLEST_SAMPLE), high - 1)
    targets = (low * 1.1 + 1, math.sqrt(low * high), high * 0.9)
    picked = {valid(max(floor, int(t))) for t in targets}
    return tuple(sorted(n for n in picked if n < high) or [valid(low)])


def level_for(working_set, machine: Machine, n: int, threads: int) -> str:
    """The level holding one thread's share of the data when `threads` threads split n."""
    share = evaluator(working_set)(n) / threads
    for name, capacity in capacities(machine, threads):
        if capacity is None or share <= capacity:
            return name
    return machine.levels[-1].name
