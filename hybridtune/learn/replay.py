"""Strategies replayed on a measured pool without measuring: each yields the variants it would measure, in order, and the one it would choose."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hybridtune.learn.hybrid import STOP_PROBABILITY, prior_belief


@dataclass(frozen=True)
class Pool:
    """One whole-pool configuration: per variant its prediction, feature row and measurement."""
    key: tuple                  # (method, ivp, n, threads)
    frame: pd.DataFrame         # variant, predicted_s, features, median_s, ci_rel, ci_low_s, ci_high_s

    @property
    def times(self) -> np.ndarray:
        return self.frame["median_s"].to_numpy(float)

    def by_prediction(self) -> list[int]:
        return list(np.lexsort((self.frame["variant"].to_numpy(), self.frame["predicted_s"])))


@dataclass(frozen=True)
class Replay:
    order: tuple                # row positions in the pool frame, in the order measured
    chosen: int                 # row position of the variant chosen
    note: str = ""


def _chosen(pool: Pool, order) -> int:
    times = pool.times
    return min(order, key=lambda i: times[i])


def run_all(pool: Pool) -> Replay:
    order = tuple(np.argsort(pool.frame["variant"].to_numpy(), kind="stable"))
    return Replay(order, _chosen(pool, order))


def top_k(pool: Pool, k: int) -> Replay:
    order = tuple(pool.by_prediction()[:max(k, 1)])
    return Replay(order, _chosen(pool, order))


def preselect(pool: Pool, percent: float) -> Replay:
    """Every variant predicted within percent of the best prediction, in predicted order."""
    ranked = pool.by_prediction()
    predicted = pool.frame["predicted_s"].to_numpy(float)
    limit = predicted[ranked[0]] * (1 + percent / 100)
    order = tuple(i for i in ranked if predicted[i] <= limit)
    return Replay(order, _chosen(pool, order))


def random_k(pool: Pool, k: int, seed: int) -> Replay:
    generator = np.random.default_rng(seed)
    order = tuple(generator.permutation(len(pool.frame))[:max(k, 1)])
    return Replay(order, _chosen(pool, order))


def fixed_variant(pool: Pool, variant: str) -> Replay:
    """BestVariant: the one variant chosen beforehand, measured once."""
    positions = np.flatnonzero(pool.frame["variant"].to_numpy() == variant)
    position = int(positions[0]) if len(positions) else pool.by_prediction()[0]
    return Replay((position,), position)


def hybrid(pool: Pool, fitted, stop: float = STOP_PROBABILITY,
           max_measurements: int | None = None) -> Replay:
    """Expected improvement on the belief, conditioned on each measurement, until no unmeasured
    variant beats the best with probability stop."""
    return hybrid_together([pool], fitted, stop, max_measurements)[0]


def hybrid_together(pools: list, fitted, stop: float = STOP_PROBABILITY,
                    max_measurements: int | None = None) -> list[Replay]:
    """hybrid on pools of one method and IVP, one after the other as a run on one node measures
    them, with one belief: what a pool's measurements say of the same variants at the other
    sizes carries to the pools after it."""
    frames = [pool.frame for pool in pools]
    starts = np.cumsum([0] + [len(frame) for frame in frames])
    configurations = [(pool.key[2], pool.key[3]) for pool, frame in zip(pools, frames)
                      for _ in range(len(frame))]
    belief, note = prior_belief(fitted, sum((f["variant"].tolist() for f in frames), []),
                                sum((f["features"].tolist() for f in frames), []),
                                np.concatenate([f["predicted_s"].to_numpy(float) for f in frames]),
                                configurations)
    out = []
    for pool, start in zip(pools, starts):
        among = np.arange(start, start + len(pool.frame))
        times, ci = pool.times, pool.frame["ci_rel"].to_numpy(float)
        order: list[int] = []
        best = None
        limit = max_measurements or len(pool.frame)
        while len(order) < limit:
            if best is not None and belief.chances(math.log(times[best]), ci[best],
                                                   among).max() < stop:
                break
            pick = belief.next_pick(None if best is None else math.log(times[best]), among=among)
            if pick is None:
                break
            pick -= start
            order.append(pick)
            belief.observe(start + pick, math.log(times[pick]), ci[pick])
            if best is None or times[pick] < times[best]:
                best = pick
        out.append(Replay(tuple(order), best, note))
    return out
