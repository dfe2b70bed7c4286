"""Sizes by working-set region: per IVP the largest valid n whose step fills a cache level.

For each IVP the largest valid n whose PIRK step's vectors fill a cache level to a set share (or
exceed the last level).
"""

from __future__ import annotations

from hybridtune.describe.ivp import IVP
from hybridtune.describe.machine import Machine

ELEMENT_BYTES = 8
FILL = 0.5            # a cache region's size fills this share of the level (one thread's part)
BEYOND_LAST = 4.0     # the memory region's size: this multiple of the last cache level


def step_vectors(stages: int) -> int:
    """Vectors of n doubles one PIRK step touches: y, the s stage approximations, the s
    right-hand-side values and the update."""
    return 2 * stages + 2


def region_names(machine: Machine) -> tuple[str, ...]:
    return tuple("MEM" if level.size_bytes is None else level.name for level in machine.levels)


def _bounds(machine: Machine, region: str) -> tuple[float, float]:
    """(bytes the level below holds, target bytes) of a region on one thread."""
    below = 0.0
    for level in machine.levels:
        if level.size_bytes is None:
            if region == "MEM":
                return below, BEYOND_LAST * below
            break
        if level.name == region:
            return below, FILL * level.size_bytes
        below = level.size_bytes
    raise KeyError(region)


def _next_valid(ivp: IVP, guess: int) -> int | None:
    try:
        n = ivp.sizes.next_valid(guess)
    except (ValueError, OverflowError):
        return None
    return n if ivp.sizes.check(n) is None else None


def largest_valid_at_most(ivp: IVP, target: int) -> int | None:
    """The largest size the IVP takes that is <= target (None when it takes none): next_valid
    never decreases with its argument, so the largest argument it keeps <= target is bisected."""
    first = _next_valid(ivp, 1)
    if first is None or first > target:
        return None
    low, high = 1, target + 1          # next_valid(low) <= target < next_valid(high) or invalid
    while high - low > 1:
        mid = (low + high) // 2
        n = _next_valid(ivp, mid)
        if n is not None and n <= target:
            low = mid
        else:
            high = mid
    return _next_valid(ivp, low)


def region_size(ivp: IVP, stages: int, machine: Machine, region: str) -> int | None:
    """The IVP's size in a region: the largest valid n whose step vectors fit the region's target
    and exceed the level below; None where the IVP takes no such n (its `max` is lower)."""
    below, target = _bounds(machine, region)
    per_component = ELEMENT_BYTES * step_vectors(stages)
    n = largest_valid_at_most(ivp, int(target // per_component))
    if n is None or n * per_component <= below:
        return None
    return n


def sizes_by_region(ivp: IVP, stages: int, machine: Machine, regions: tuple) -> tuple[int, ...]:
    found = (region_size(ivp, stages, machine, region) for region in regions)
    return tuple(sorted({n for n in found if n is not None}))
