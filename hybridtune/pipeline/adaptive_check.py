"""The adaptive tuned library judged: its kept variant against a separate re-timing, and its cost."""

from __future__ import annotations

import numpy as np

WITHIN = 0.02            # the kept variant's allowed gap to the re-timing's best
OVERHEAD = 0.01          # the adaptation's allowed cost over a run fixed to the kept variant


def against_retiming(rounds: dict, kept: str) -> dict:
    """The kept variant against the candidates' separate interleaved re-timing (variant -> its
    per-step median in each round): the best by median over rounds, the kept one's median gap
    to it over the rounds' paired ratios, tied where the kept one was no slower in some round,
    and whether it is within WITHIN or tied."""
    medians = {variant: float(np.median(times)) for variant, times in rounds.items()}
    best = min(medians, key=medians.get)
    ratios = np.asarray(rounds[kept], float) / np.asarray(rounds[best], float)
    behind = float(np.median(ratios) - 1)
    tied = bool(ratios.min() <= 1.0)
    return {"retimed_best": best, "retimed_s": medians, "behind": behind, "tied": tied,
            "within": behind <= WITHIN or tied}


def accounted_overhead(lines: list, steps: int) -> float:
    """What the adaptation cost, from the run's own report lines (store import's format): the
    steps each dropped candidate ran times its median's excess over the kept one's, as a share
    of the run's steps at the kept one's median. The steps not counted (a turn's first) are left
    out."""
    kept = next(line for line in lines if line["kept"])
    extra = sum(line["steps"] * (line["median_s"] - kept["median_s"])
                for line in lines if not line["kept"])
    return extra / (steps * kept["median_s"])
