"""Shortlists from a ranking: every variant within X% of the best prediction, or the top k."""

from __future__ import annotations

from hybridtune.describe.scenario import Strategy
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


def shortlist(ranking: list[VariantPrediction], strategy: Strategy) -> list[VariantPrediction]:
    """The variants the strategy measures: preselect (deviation), top_k or run_all."""
    if strategy.name == "preselect":
        return within_deviation(ranking, strategy.deviation_percent)
    if strategy.name == "top_k":
        return top_k(ranking, strategy.k)
    return [p for p in ranking if p.status == "ok"]
