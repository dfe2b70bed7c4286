"""A timing's noise as the machine makes it: drift shared by consecutive timings, rare slow tails.

Fitted to pairs of passes (log(second / first) of the same code) of a configuration's contenders
(the variants near its best, whose noise decides a choice: far slower ones are noisier and shift
apart between passes) and to the interleaved re-timing rounds; drawn where a store holds one pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.signal import lfilter

from hybridtune.learn.table import CONFIG

NEAR_BEST = 0.05        # a contender: its mean of passes within this share of the best's
NEAR_LEAST = 12         # or, where fewer are, this many of the fastest
TAIL_Z = 3.0            # a pair this many spreads apart holds a slow excursion, not the core's noise
DRIFT_MAX = 0.95
RETIMINGS_MIN = 10      # interleaved re-timings the re-timing spread is measured from


@dataclass(frozen=True)
class NoiseModel:
    """One timing's log error: spread * (AR(1) of coefficient drift over the measurement order),
    plus with probability tail_rate a slow excursion drawn from tails; a re-timing's error is
    normal of retime_spread."""
    spread: float
    drift: float
    tail_rate: float
    tails: tuple
    retime_spread: float
    pairs: int

    def draw(self, generator: np.random.Generator, size: int, rounds: int = 1) -> np.ndarray:
        """(size, 1 + rounds) log errors: a first timing of each row (rows in measurement order)
        and its re-timings in `rounds` interleaved rounds."""
        steps = generator.standard_normal(size)
        scale = math.sqrt(1 - self.drift ** 2)
        series = lfilter([1.0], [1.0, -self.drift], np.concatenate([steps[:1], scale * steps[1:]]))
        first = self.spread * series
        slow = generator.random(size) < self.tail_rate
        if slow.any() and self.tails:
            first[slow] += generator.choice(np.asarray(self.tails), int(slow.sum()))
        again = generator.normal(0.0, self.retime_spread, (size, rounds))
        return np.column_stack([first, again])

    def as_dict(self) -> dict:
        return {"spread_log": self.spread, "drift": self.drift, "tail_rate": self.tail_rate,
                "tails": len(self.tails), "retime_spread_log": self.retime_spread,
                "pairs": self.pairs}


def contender_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs (noise.pass_ratios) of each configuration's contenders, their shift the median of
    their own ratios."""
    found = []
    for _, group in pairs.groupby(list(CONFIG)):
        truth = np.sqrt(group["one"].to_numpy(float) * group["two"].to_numpy(float))
        limit = max(truth.min() * (1 + NEAR_BEST), np.sort(truth)[min(NEAR_LEAST, len(truth)) - 1])
        near = group[truth <= limit]
        found.append(near.assign(shift=float(near["ratio"].median())))
    return pd.concat(found) if found else pairs.iloc[:0]


def retime_spread(retimings) -> float | None:
    """The robust spread (1.4826 MAD) of interleaved re-timings' log errors; None with fewer than
    RETIMINGS_MIN of them."""
    if retimings is None or len(retimings) < RETIMINGS_MIN:
        return None
    errors = np.asarray(retimings, float)
    return 1.4826 * float(np.median(np.abs(errors - np.median(errors))))


def fit_noise(pairs: pd.DataFrame, retimings: pd.DataFrame | None = None) -> NoiseModel:
    """The model of pairs (noise.pass_ratios: ratio, shift, order per variant) and of retimings
    (log errors of interleaved re-timings about their variant's mean of passes, each round's
    shift removed): robust spread, lag-1 autocorrelation of the core in measurement order, the
    excursions beyond TAIL_Z spreads (one timing of such a pair is slow: half their share)."""
    d = (pairs["ratio"] - pairs["shift"]).to_numpy(float)
    spread = 1.4826 * float(np.median(np.abs(d))) / math.sqrt(2)
    bound = TAIL_Z * spread * math.sqrt(2)      # d holds two timings' errors
    beyond = np.abs(d) > bound
    # the core's drift with the excursions clipped at the same bound that makes them tails
    core = pairs.assign(_d=np.clip(d, -bound, bound))
    lags = []
    for _, group in core.groupby(list(CONFIG)):
        series = group.sort_values("order")["_d"].to_numpy(float)
        if len(series) > 2 and np.std(series) > 0:
            lags.append((np.corrcoef(series[:-1], series[1:])[0, 1], len(series)))
    drift = (float(np.average([c for c, _ in lags], weights=[k for _, k in lags]))
             if lags else 0.0)
    own = retime_spread(retimings)
    retime = spread if own is None else own
    return NoiseModel(spread, min(max(drift, 0.0), DRIFT_MAX), float(beyond.mean()) / 2,
                      tuple(np.abs(d[beyond]).tolist()), retime, len(pairs))
