"""Shortlists from a ranking: within X% of the best prediction, the top k, a seeded random k, or all."""

from __future__ import annotations

import random

from hybridtune.describe.strategy import Strategy
from hybridtune.predict.variants import VariantPrediction


def within_deviation(ranking: list[VariantPrediction], percent: float) -> list[VariantPrediction]:
    """Ranked variants whose prediction is at most `percent` % above the best one."""
    ok = [p for p in ranking if p.status == "ok"]
    if not ok:
        return []
    limit = ok[0].predicted_s * (1.0 + percent / 100.0)
    return [p for p in ok if p.predicted_s <= limit]


def top_k(ranking: list[VariantPrediction], k: int) -> list[VariantPrediction]:
    return [p for p in ranking if p.status == "ok"][:k]


def random_k(ranking: list[VariantPrediction], k: int, seed: int) -> list[VariantPrediction]:
    """k ranked variants drawn without replacement (the same for the same seed), in rank order."""
    ok = [p for p in ranking if p.status == "ok"]
    drawn = set(random.Random(seed).sample(range(len(ok)), min(k, len(ok))))
    return [p for i, p in enumerate(ok) if i in drawn]


def shortlist(ranking: list[VariantPrediction], strategy: Strategy) -> list[VariantPrediction]:
    """The variants the strategy measures: preselect (deviation), top_k, random or run_all; for
    hybrid every ranked variant is a candidate, the measurements decide how many run."""
    if strategy.name == "preselect":
        return within_deviation(ranking, strategy.deviation_percent)
    if strategy.name == "top_k":
        return top_k(ranking, strategy.k)
    if strategy.name == "random":
        return random_k(ranking, strategy.k, strategy.seed)
    return [p for p in ranking if p.status == "ok"]
