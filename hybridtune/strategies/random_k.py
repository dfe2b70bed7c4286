"""random:K[:SEED]: K variants drawn without replacement, whatever their predictions.

Measured in the order drawn; the same seed and candidates give the same draw.
"""

from __future__ import annotations

import random

from hybridtune.strategies.protocol import Candidates, Planned


def search(candidates: Candidates, k: int, seed: int) -> Planned:
    by_id = sorted(range(len(candidates)), key=lambda i: candidates.ids[i])
    drawn = random.Random(seed).sample(by_id, min(k, len(by_id)))
    return Planned(drawn, f"{k} drawn at random (seed {seed})")
