"""Strategies replayed on a measured pool without measuring.

Each yields the variants it would measure, in order, and the one it would choose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from hybridtune.describe.strategy import HYBRID_STOP, Strategy
from hybridtune.errors import HybridtuneError
from hybridtune.learn.encode import kernel_variants
from hybridtune.learn import timing
from hybridtune.learn.belief import Belief
from hybridtune.learn.prior import SHIPPED_EFFECTS, SHIPPED_ERRORS, prior_belief
from hybridtune.learn.kernel_effects import KernelEffects
from hybridtune.learn.offline_errors import OfflineErrors
from hybridtune.learn.table import CONFIG, Rows
from hybridtune.strategies.hybrid import HybridSearch, first_cover, teaching_picks
from hybridtune.strategies.protocol import Candidates, Search
from hybridtune.strategies.registry import sampled, search_for


class Unmeasured(HybridtuneError):
    """A replayed search asked for a variant whose time the store does not hold."""


@dataclass(frozen=True)
class StoredPool:
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
    retimed: tuple = ()         # row positions of the close contenders re-timed before choosing
    decisions: tuple = ()       # hybrid: its stop decisions (strategies/hybrid.Decision)


def candidates(pool: StoredPool) -> tuple[Candidates, list[int]]:
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


def in_rows(pool: StoredPool) -> Candidates:
    """The pool's variants in its rows' order (a hybrid replay's positions)."""
    frame = pool.frame
    return Candidates(tuple(frame["variant"]), tuple(frame["predicted_s"].to_numpy(float)))


def configuration_pools(rows: Rows) -> list[StoredPool]:
    """Every configuration of the rows with all its predicted variants, unmeasured ones too (their
    time NaN): a strategy's candidates are the same as they were live."""
    frame = rows.frame
    return [StoredPool(tuple(key), group.reset_index(drop=True).assign(
                ci_rel=group["ci_rel"].fillna(0.0).to_numpy()))
            for key, group in frame.groupby(list(CONFIG), sort=True)]


def drive(pool: StoredPool, search: Search, rows: list[int], errors: np.ndarray | None = None,
          rounds: int = 1) -> Replay:
    """Run a search on the pool as the live driver runs it on one node: asked for one variant at
    a time, told its stored time (times exp(errors[row, 0]), a first timing's noise, where given);
    rows maps the search's candidates to the pool's rows. Asking for a variant the pool never
    measured is a replay that could not have happened: it raises. It ends as a live run does:
    the close contenders re-timed (the store's re-timings without errors, else noise
    errors[row, 1]), the choice by learn/timing's rule."""
    times, ci = pool.times, _told_intervals(pool, errors)
    as_stored = errors is None
    errors = np.zeros((len(times), 2)) if errors is None else errors
    order: list[int] = []
    seen: dict = {}
    while not search.ended_by:
        asked = search.ask(1)
        if not asked:
            break
        for position in asked:
            row = rows[position]
            if not math.isfinite(times[row]):
                raise Unmeasured(f"{pool.key}: the search asked for "
                                 f"{pool.frame['variant'].iloc[row]}, which the "
                                 "store never measured")
            order.append(row)
            seen[row] = float(times[row] * math.exp(errors[row, 0]))
            search.tell(position, seen[row], float(ci[row]))
    return replace(_finished(pool, tuple(order), seen, errors, ci, as_stored, rounds),
                   decisions=tuple(getattr(search, "decisions", ())))


def _finished(pool: StoredPool, order: tuple, seen: dict, errors: np.ndarray, ci: np.ndarray,
              as_stored: bool, rounds: int = 1) -> Replay:
    """The replay of a search that measured `order` (seen: row -> the time it was told, ci: each
    row's interval as it was told): its close contenders raced and the choice made as live.
    as_stored: a re-timing is the store's where it holds one (the replay of a run); else the
    draws of `rounds` interleaved rounds (errors[row, 1:1 + rounds], their mean in log) about
    the stored time, which is what evaluations judge by."""
    if not order:
        return Replay(order, -1)
    frame = pool.frame
    own = getattr(errors, "ci_rel", None) is not None
    low, high = ((frame[name].to_numpy(float) if name in frame and not own
                  else pool.times * (1 + sign * ci))
                 for name, sign in (("ci_low_s", -1), ("ci_high_s", 1)))
    # each interval moves with its timing's noise
    close = timing.contenders({row: (t, low[row] * t / pool.times[row], high[row] * t / pool.times[row])
                               for row, t in seen.items()})
    stored = frame["retimed_s"].to_numpy(float) if "retimed_s" in frame \
        else np.full(len(ci), np.nan)
    again = {row: float(stored[row] if as_stored and math.isfinite(stored[row])
                        else pool.times[row] * math.exp(np.mean(errors[row, 1:1 + rounds])))
             for row in close}
    return Replay(order, int(timing.choose(seen, again)), retimed=tuple(close))


def _told_intervals(pool: StoredPool, errors) -> np.ndarray:
    """Each row's ci_rel as a search is told it: the replayed pass's own where the draws are
    one stored pass (noise.PassDraws), else the pool's."""
    own = getattr(errors, "ci_rel", None)
    return np.asarray(own, float) if own is not None else pool.frame["ci_rel"].to_numpy(float)


def run(pool: StoredPool, spec: Strategy, errors: np.ndarray | None = None,
        rounds: int = 1) -> Replay:
    """A strategy (any but hybrid, which replays on a model: hybrid_together) on the pool, its
    contenders raced in `rounds` rounds."""
    found, rows = candidates(pool)
    return drive(pool, search_for(spec, found), rows, errors, rounds)


def fixed_variant(pool: StoredPool, variant: str) -> Replay:
    """BestVariant: the one variant chosen beforehand, measured once (noise cannot change it)."""
    positions = np.flatnonzero(pool.frame["variant"].to_numpy() == variant)
    position = int(positions[0]) if len(positions) else pool.by_prediction()[0]
    return Replay((position,), position)


def hybrid(pool: StoredPool, fitted, stop: float = HYBRID_STOP,
           max_measurements: int | None = None, sample: float = 0.0) -> Replay:
    """Expected improvement on the belief, conditioned on each measurement, until fewer than
    `stop` unmeasured variants are expected to beat the best held (strategies/hybrid)."""
    return hybrid_together([pool], fitted, stop, max_measurements, sample=sample)[0]


def hybrid_prior(pools: list, fitted, offline: OfflineErrors = SHIPPED_ERRORS,
                 effects: KernelEffects | None = SHIPPED_EFFECTS) -> tuple[Belief, str]:
    """The belief over pools of one method and IVP before anything is measured, and its note;
    without a model (fitted None) the kernel effects `effects` (as live: the shipped ones by
    default), else, with effects None, the offline model with the errors `offline`."""
    frames = [pool.frame for pool in pools]
    configurations = [(pool.key[2], pool.key[4], pool.key[3]) for pool, frame in zip(pools, frames)
                      for _ in range(len(frame))]
    return prior_belief(fitted, sum((f["variant"].tolist() for f in frames), []),
                        sum((f["features"].tolist() for f in frames), []),
                        np.concatenate([f["predicted_s"].to_numpy(float) for f in frames]),
                        configurations, offline, effects)


def hybrid_together(pools: list, fitted, stop: float = HYBRID_STOP,
                    max_measurements: int | None = None, errors: list | None = None,
                    prior: tuple | None = None, sample: float = 0.0) -> list[Replay]:
    """hybrid on pools of one method and IVP, one after the other as a run on one node measures
    them, with one belief: what a pool's measurements say of the same variants at the other
    sizes carries to the pools after it. errors: per pool its noise draws; prior: hybrid_prior's
    result, where built once for several replays; sample: the share of a space-filling sample."""
    start_belief, note = prior or hybrid_prior(pools, fitted)
    belief = start_belief.unobserved()
    starts = np.cumsum([0] + [len(pool.frame) for pool in pools])
    out = []
    for index, (pool, start) in enumerate(zip(pools, starts)):
        size = len(pool.frame)
        covered = first_cover(pool.frame["variant"].tolist(), belief, int(start))
        search = sampled(HybridSearch(belief, size, stop, max_measurements or size, int(start),
                                      covered, teaching_picks(fitted)),
                         in_rows(pool), sample)
        out.append(replace(drive(pool, search, list(range(size)),
                                 None if errors is None else errors[index]), note=note))
    return out
