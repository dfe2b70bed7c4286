"""What measurements of other configurations tell of a left-out IVP's configuration.

Orders of its variants taken from the other IVPs' and its own other sizes' measured times, as a
model that reproduced those times exactly would order them, and where its level lies among the other
IVPs'.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hybridtune.learn.level import SAME_SIZE
from hybridtune.strategies.metrics import measurements_to_within
from hybridtune.strategies.replay import StoredPool
from hybridtune.learn.train import pool_targets

MEAN = "mean_of_other_ivps"          # by the variant's mean log(t / t_best) over the other IVPs
BEST_OTHER = "best_other_ivp_in_hindsight"  # the other IVPs' own orders, the best for each figure
OWN_SIZE = "own_nearest_other_size"  # the same IVP's order at its nearest other n
ORDERS = (MEAN, BEST_OTHER, OWN_SIZE)
LABELS = {MEAN: "by the variant's mean log(t / t_best) over the other IVPs",
          BEST_OTHER: "by one other IVP's order, the best of them for each figure (hindsight)",
          OWN_SIZE: "by the same IVP's order at its nearest other n"}
LEVEL = ("the configuration's level, the median log(measured / offline prediction), lies "
         "outside the range of the other IVPs' levels at the same n and threads")


def counterparts(pool: StoredPool, pools: list[StoredPool]) -> list[StoredPool]:
    """Per other IVP its pool of the same method and layout nearest to pool's n, where that is
    within SAME_SIZE of the nearest any other IVP has."""
    method, ivp, n, ranks, threads = pool.key
    nearest: dict = {}
    for other in pools:
        if other.key[1] == ivp or other.key[0] != method or other.key[3:] != (ranks, threads):
            continue
        distance = abs(math.log(other.key[2] / n))
        if other.key[1] not in nearest or distance < nearest[other.key[1]][0]:
            nearest[other.key[1]] = (distance, other)
    if not nearest:
        return []
    closest = min(distance for distance, _ in nearest.values())
    return [other for name, (distance, other) in sorted(nearest.items())
            if distance <= closest + SAME_SIZE]


def own_other_size(pool: StoredPool, pools: list[StoredPool]) -> StoredPool | None:
    """The same IVP's pool of the same method and layout at the nearest other n."""
    method, ivp, n, ranks, threads = pool.key
    mine = [p for p in pools
            if p.key[:2] == (method, ivp) and p.key[3:] == (ranks, threads) and p.key[2] != n]
    return min(mine, key=lambda p: (abs(math.log(p.key[2] / n)), p.key[2]), default=None)


def _relative(pool: StoredPool) -> pd.Series:
    """log(t / t_best) per variant of a pool."""
    times = pool.times
    return pd.Series(np.log(times / times.min()), index=pool.frame["variant"].to_numpy())


def _order(pool: StoredPool, score: pd.Series) -> tuple:
    """pool's positions by score (a variant without one last), ties by variant name."""
    variants = pool.frame["variant"].to_numpy()
    values = score.reindex(variants).to_numpy(float)
    return tuple(int(i) for i in np.lexsort((variants, np.nan_to_num(values, nan=math.inf))))


def transfer_orders(pool: StoredPool, others: list[StoredPool], own: StoredPool | None = None) -> dict:
    """MEAN: one order; BEST_OTHER: each other IVP's order; OWN_SIZE: the own pool's order (none
    without one)."""
    relative = [_relative(other) for other in others]
    return {MEAN: [_order(pool, pd.concat(relative, axis=1).mean(axis=1))],
            BEST_OTHER: [_order(pool, r) for r in relative],
            OWN_SIZE: [_order(pool, _relative(own))] if own is not None else []}


def configuration_transfer(pool: StoredPool, pools: list[StoredPool], first_within: float,
                           loss_within: float) -> dict | None:
    """Per order: whether its first variant is within first_within of the best and how many
    measurements it takes to one within loss_within (BEST_OTHER: whether any other IVP's order
    starts within, and the fewest of theirs, each figure chosen on its own); and the
    configuration's level against the other IVPs' levels there. None without another IVP's pool."""
    others = counterparts(pool, pools)
    if not others:
        return None
    times = pool.times
    out = {}
    for name, orders in transfer_orders(pool, others, own_other_size(pool, pools)).items():
        if orders:
            counts = [measurements_to_within(times, order, loss_within) for order in orders]
            out[name] = {"first_within": any(measurements_to_within(times, order, first_within) == 1
                                             for order in orders),
                         "to_within": min(c for c in counts if c is not None)}
    levels = [level(other) for other in others]
    own = level(pool)
    out["level"] = {"own": own, "others_low": min(levels), "others_high": max(levels),
                    "outside": not min(levels) <= own <= max(levels),
                    "others": [other.key[1] for other in others]}
    return out


def level(pool: StoredPool) -> float:
    """The configuration's level as a model learns it: the median of log(measured / the
    configuration's median offline prediction)."""
    return float(np.median(pool_targets(pool.frame)))


def summary(per_configuration: list[dict]) -> dict:
    """Over the configurations with another IVP's pool: per order the share whose first pick is
    within and the mean count to within (and over how many configurations: the own other size
    is not known for every one); the share whose level lies outside the other IVPs'."""
    known = [c for c in per_configuration if c]
    if not known:
        return {}
    out = {}
    for name in ORDERS:
        having = [c[name] for c in known if name in c]
        if having:
            out[name] = {"first_within_5pct": float(np.mean([c["first_within"] for c in having])),
                         "to_within_3pct_mean": float(np.mean([c["to_within"] for c in having])),
                         "configurations": len(having)}
    out["level_outside_other_ivps"] = float(np.mean([c["level"]["outside"] for c in known]))
    out["configurations"] = len(known)
    return out
