"""What the other IVPs' measurements can tell of a left-out IVP's configuration: orders of its variants built from their measured times, and where its level lies among theirs: what a model that reproduced those IVPs' times exactly would do."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hybridtune.learn.level import SAME_SIZE
from hybridtune.learn.replay import Pool
from hybridtune.learn.train import pool_targets

MEAN = "mean_of_other_ivps"            # by the variant's mean log(t / t_best) over the other IVPs
HINDSIGHT = "best_other_ivp_in_hindsight"   # one other IVP's own order, the best for the metric


def counterparts(pool: Pool, pools: list[Pool]) -> list[Pool]:
    """Per other IVP its pool of the same method and thread count nearest to pool's n, where that
    is within SAME_SIZE of the nearest any other IVP has."""
    method, ivp, n, threads = pool.key
    nearest: dict = {}
    for other in pools:
        if other.key[1] == ivp or other.key[0] != method or other.key[3] != threads:
            continue
        distance = abs(math.log(other.key[2] / n))
        if other.key[1] not in nearest or distance < nearest[other.key[1]][0]:
            nearest[other.key[1]] = (distance, other)
    if not nearest:
        return []
    closest = min(distance for distance, _ in nearest.values())
    return [other for name, (distance, other) in sorted(nearest.items())
            if distance <= closest + SAME_SIZE]


def _relative(pool: Pool) -> pd.Series:
    """log(t / t_best) per variant of a pool."""
    times = pool.times
    return pd.Series(np.log(times / times.min()), index=pool.frame["variant"].to_numpy())


def _order(pool: Pool, score: pd.Series) -> tuple:
    """pool's positions by score (a variant without one last), ties by variant name."""
    variants = pool.frame["variant"].to_numpy()
    values = score.reindex(variants).to_numpy(float)
    return tuple(int(i) for i in np.lexsort((variants, np.nan_to_num(values, nan=math.inf))))


def transfer_orders(pool: Pool, others: list[Pool]) -> dict:
    """MEAN: one order; HINDSIGHT: every other IVP's order (the metric picks the best)."""
    relative = [_relative(other) for other in others]
    return {MEAN: [_order(pool, pd.concat(relative, axis=1).mean(axis=1))],
            HINDSIGHT: [_order(pool, r) for r in relative]}


def reached(times: np.ndarray, order, within: float) -> int | None:
    """How many measurements in this order reach a variant within `within` of the best."""
    limit = times.min() * (1 + within)
    return next((count for count, i in enumerate(order, 1) if times[i] <= limit), None)


def configuration_ceiling(pool: Pool, pools: list[Pool], first_within: float,
                          loss_within: float) -> dict | None:
    """Per order: whether its first variant is within first_within of the best and how many
    measurements it takes to one within loss_within (HINDSIGHT: the best of the other IVPs'
    orders for each); and the configuration's level against the other IVPs' levels there.
    None without a counterpart."""
    others = counterparts(pool, pools)
    if not others:
        return None
    times = pool.times
    out = {}
    for name, orders in transfer_orders(pool, others).items():
        counts = [reached(times, order, loss_within) for order in orders]
        out[name] = {"first_within": any(bool(times[order[0]] <= times.min() * (1 + first_within))
                                         for order in orders),
                     "to_within": min(c for c in counts if c is not None)}
    levels = [level(other) for other in others]
    own = level(pool)
    out["level"] = {"own": own, "others_low": min(levels), "others_high": max(levels),
                    "outside": not min(levels) <= own <= max(levels),
                    "others": [other.key[1] for other in others]}
    return out


def level(pool: Pool) -> float:
    """The configuration's level as a model learns it: the median of log(measured / the
    configuration's median prediction)."""
    return float(np.median(pool_targets(pool.frame)))


def summary(per_configuration: list[dict]) -> dict:
    """Over the configurations with a ceiling: per order the share whose first pick is within and
    the mean count to within; the share whose level lies outside the other IVPs'."""
    known = [c for c in per_configuration if c]
    if not known:
        return {}
    out = {name: {"first_within_5pct": float(np.mean([c[name]["first_within"] for c in known])),
                  "to_within_1pct_mean": float(np.mean([c[name]["to_within"] for c in known]))}
           for name in (MEAN, HINDSIGHT)}
    out["level_outside_other_ivps"] = float(np.mean([c["level"]["outside"] for c in known]))
    out["configurations"] = len(known)
    return out
