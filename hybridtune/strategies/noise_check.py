"""The noise model checked against the machine: choosing by one pass and judging by the other.

The store's own two passes give the loss of choosing by a first timing and judging by another
(observed); the model fitted to them replays the same with two drawn passes about the mean of the
real ones (replayed). A model that matches the machine reproduces the observed loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hybridtune.learn.table import CONFIG
from hybridtune.strategies.noise import MIN_PAIRS, seeded_generator


def _loss(chooser: np.ndarray, judge: np.ndarray) -> float:
    return float(judge[int(np.argmin(chooser))] / judge.min() - 1)


def pass_choice_loss(pairs: pd.DataFrame, models: dict, seeds: int = 20,
                     min_pairs: int = MIN_PAIRS) -> dict:
    """Mean loss over configurations with min_pairs pairs: observed (choose by the first pass,
    judge by the second) and replayed (the same with draws of the configuration's model in
    `models` about the passes' mean, in the order the first pass timed them, over seeds)."""
    observed, replayed = [], []
    for key, pool in pairs.groupby(list(CONFIG)):
        model = models.get(tuple(key))
        if len(pool) < min_pairs or model is None:
            continue
        pool = pool.sort_values("order")
        one, two = pool["one"].to_numpy(float), pool["two"].to_numpy(float)
        observed.append(_loss(one, two))
        truth = np.sqrt(one * two)
        losses = []
        for seed in range(seeds):
            generator = seeded_generator(seed, tuple(key))
            chooser, judge = (truth * np.exp(model.draw(generator, len(pool))[:, 0])
                              for _ in range(2))
            losses.append(_loss(chooser, judge))
        replayed.append(float(np.mean(losses)))
    return {"configurations": len(observed),
            "observed_pct": 100 * float(np.mean(observed)) if observed else float("nan"),
            "replayed_pct": 100 * float(np.mean(replayed)) if replayed else float("nan")}
