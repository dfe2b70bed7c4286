"""A live search's choice judged against strong variants re-timed in alternating rounds.

The strong variants: the choice, the search's fastest first timings and an independent sample's.
Each is timed once per round, every other round in reverse order; a variant's time is the median
of its rounds (one spike in a round moves it little), its geometric mean written beside; the
reference is the mean of the three fastest.
"""

from __future__ import annotations

import math
import statistics


def cover(shortlisted: list[str]) -> list[str]:
    """The first of each skeleton in the offline order: its best predicted variant."""
    return list({i.split("_", 1)[0]: i for i in reversed(shortlisted)}.values())


def strong_variants(chosen: str, mine: dict, theirs: dict, from_each: int) -> list[str]:
    """The choice, then the from_each fastest of each set of first timings (id -> s/step)."""
    return list(dict.fromkeys([chosen] + sorted(mine, key=mine.get)[:from_each]
                              + sorted(theirs, key=theirs.get)[:from_each]))


def round_order(ids: list[str], round_number: int) -> list[str]:
    """The order of one round: as given in even rounds, reversed in odd ones."""
    return ids if round_number % 2 == 0 else ids[::-1]


def against_fastest(times: dict, chosen: str) -> tuple[float, list, float]:
    """chosen's time against the mean of the three fastest (and those and that mean)."""
    fastest = sorted(times, key=times.get)[:3]
    reference = sum(times[i] for i in fastest) / len(fastest)
    return (times[chosen] / reference - 1 if chosen in times else math.nan), fastest, reference


def judged(rounds: dict, chosen: str, target: float) -> dict:
    """The choice against the fastest by the rounds' medians (and by their geometric means)."""
    timed = {i: t for i, t in rounds.items() if t}
    loss, fastest, reference = against_fastest(
        {i: statistics.median(t) for i, t in timed.items()}, chosen)
    by_mean = against_fastest(
        {i: math.exp(sum(map(math.log, t)) / len(t)) for i, t in timed.items()}, chosen)[0]
    return {"three_fastest": fastest, "reference_s": reference, "chosen_vs_reference": loss,
            "chosen_vs_reference_geometric_means": by_mean, "within_target": bool(loss <= target)}


def tie_or_within(rounds: dict, chosen: str, tied: list, target: float) -> dict:
    """The choice against the fastest by the rounds' medians: it passes within target of it, or
    where the fastest is among the variants the run named as tied with the choice."""
    medians = {i: statistics.median(t) for i, t in rounds.items() if t}
    fastest = min(medians, key=medians.get)
    behind = medians[chosen] / medians[fastest] - 1
    return {"fastest": fastest, "behind": behind, "tied": list(tied),
            "passes": bool(behind <= target or fastest in tied)}
