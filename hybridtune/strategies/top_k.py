"""top_k:K: the K best predicted variants, best first."""

from __future__ import annotations

from hybridtune.strategies.protocol import Candidates, Planned


def search(candidates: Candidates, k: int) -> Planned:
    return Planned(range(min(k, len(candidates))), f"the {k} best predicted")
