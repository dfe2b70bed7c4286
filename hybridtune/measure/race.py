"""The race of a configuration's leader against its closest contenders: when it ends, who ties.

Each racer is timed in interleaved rounds; a racer's timing is (median, low, high) of its samples.
The race is settled when every contender's interval lies above the leader's (told apart) or its
median is within RACE_GAP of the leader's (a gap too small to matter); the contenders whose
interval still reaches the leader's are tied with it.
"""

from __future__ import annotations

import math

RACE_GAP = 0.02         # a gap below this share of the leader's time is too small to matter


def leader(timings: dict):
    """The id with the least median (ties by id)."""
    return min(timings, key=lambda i: (timings[i][0], str(i))) if timings else None


def gap(timings: dict, first, other) -> float:
    """How much slower other's median is than first's, as a share of first's."""
    return timings[other][0] / timings[first][0] - 1


def told_apart(timings: dict, first, other) -> bool:
    """other's interval lies wholly above first's (an unbounded interval never does)."""
    high, low = timings[first][2], timings[other][1]
    return math.isfinite(high) and math.isfinite(low) and low > high


def settled(timings: dict, practical_gap: float = RACE_GAP) -> bool:
    """Every contender told apart from the leader or within practical_gap of it."""
    best = leader(timings)
    return all(told_apart(timings, best, other) or gap(timings, best, other) < practical_gap
               for other in timings if other != best)


def tied(timings: dict, chosen) -> dict:
    """id -> gap to chosen of every other racer not told apart from it, closest first (a missing
    or NaN bound is taken as the median; an infinite one leaves it unbounded)."""
    timings = {i: (t[0], *(t[0] if b is None or math.isnan(b) else b for b in t[1:]))
               for i, t in timings.items()}
    found = {other: gap(timings, chosen, other) for other in timings
             if other != chosen and not told_apart(timings, chosen, other)}
    return dict(sorted(found.items(), key=lambda item: (item[1], str(item[0]))))
