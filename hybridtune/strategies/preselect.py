"""preselect:P, the Offsite paper's strategy: every variant predicted within P% of the best.

The best predicted first.
"""

from __future__ import annotations

from hybridtune.strategies.protocol import Candidates, Planned


def search(candidates: Candidates, percent: float) -> Planned:
    if not len(candidates):
        return Planned([], "no ranked variant")
    limit = candidates.predicted_s[0] * (1.0 + percent / 100.0)
    order = [i for i, predicted in enumerate(candidates.predicted_s) if predicted <= limit]
    return Planned(order, f"every variant within {percent:g}% of the best prediction")
