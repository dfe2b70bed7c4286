"""Strategies replayed on a measured pool without measuring: each yields the variants it would measure, in order, and the one it would choose."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from hybridtune.describe.strategy import HYBRID_STOP, Strategy
from hybridtune.errors import HybridtuneError
from hybridtune.learn.encode import kernel_variants
from hybridtune.learn.hybrid import prior_belief
from hybridtune.learn.table import CONFIG, Rows
from hybridtune.strategies.hybrid import HybridSearch
from hybridtune.strategies.protocol import Candidates, Search
from hybridtune.strategies.registry import search_for


class Unmeasured(HybridtuneError):
    """A replayed search asked for a variant whose time the store does not hold."""


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


def candidates(pool: Pool) -> tuple[Candidates, list[int]]:
    """The pool's variants as a strategy sees them live (offline order) and each one's row."""
    rows = [int(i) for i in pool.by_prediction()]
    frame = pool.frame
    variants = frame["variant"].to_numpy()
    kernels = ()
    if "features" in frame:
        features = frame["features"].to_numpy()
        kernels = tuple(tuple(kernel_variants(variants[i], features[i])) for i in rows)
    return Candidates(tuple(variants[rows]), tuple(frame["predicted_s"].to_numpy(float)[rows]),
                      kernels), rows


def configuration_pools(rows: Rows) -> list[Pool]:
    """Every configuration of the rows with all its predicted variants, unmeasured ones too (their
    time NaN): a strategy's candidates are the same as they were live."""
    frame = rows.frame
    return [Pool(tuple(key), group.reset_index(drop=True).assign(
                ci_rel=group["ci_rel"].fillna(0.0).to_numpy()))
            for key, group in frame.groupby(list(CONFIG), sort=True)]


def drive(pool: Pool, search: Search, rows: list[int]) -> Replay:
    """Run a search on the pool as the live driver runs it on one node: asked for one variant at
    a time, told its stored time; rows maps the search's candidates to the pool's rows. Asking
    for a variant the pool never measured is a replay that could not have happened: it raises."""
    times, ci = pool.times, pool.frame["ci_rel"].to_numpy(float)
    order: list[int] = []
    while not search.ended_by:
        asked = search.ask(1)
        if not asked:
            break
        for position in asked:
            if not math.isfinite(times[rows[position]]):
                raise Unmeasured(f"{pool.key}: the search asked for "
                                 f"{pool.frame['variant'].iloc[rows[position]]}, which the "
                                 "store never measured")
            order.append(rows[position])
            search.tell(position, float(times[rows[position]]), float(ci[rows[position]]))
    return Replay(tuple(order), _chosen(pool, order) if order else -1)


def run(pool: Pool, spec: Strategy) -> Replay:
    """A strategy (any but hybrid, which replays on a model: hybrid_together) on the pool."""
    found, rows = candidates(pool)
    return drive(pool, search_for(spec, found), rows)


def fixed_variant(pool: Pool, variant: str) -> Replay:
    """BestVariant: the one variant chosen beforehand, measured once."""
    positions = np.flatnonzero(pool.frame["variant"].to_numpy() == variant)
    position = int(positions[0]) if len(positions) else pool.by_prediction()[0]
    return Replay((position,), position)


def hybrid(pool: Pool, fitted, stop: float = HYBRID_STOP,
           max_measurements: int | None = None) -> Replay:
    """Expected improvement on the belief, conditioned on each measurement, until no unmeasured
    variant beats the best with probability stop."""
    return hybrid_together([pool], fitted, stop, max_measurements)[0]


def hybrid_together(pools: list, fitted, stop: float = HYBRID_STOP,
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
        size = len(pool.frame)
        search = HybridSearch(belief, size, stop, max_measurements or size, int(start))
        out.append(replace(drive(pool, search, list(range(size))), note=note))
    return out
