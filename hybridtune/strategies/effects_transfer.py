"""Kernel effects across hosts: hybrid without a model, its effects the other's, its own or both.

For each IVP of the target host, the effects are fitted on whole pools without that IVP: the source
host's (leave one host and one IVP out), the target's own, and both hosts' together (what a third
host gets from the shipped ground truths); hybrid is replayed on the target's pools of that IVP with
each, under the target's noise. own_share: the share of the effects' own error the prior keeps (1:
all of it, as hybrid's prior does).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from hybridtune.learn import kernel_effects
from hybridtune.strategies import in_parallel, metrics, replay
from hybridtune.strategies.leave_one_out import whole_pools
from hybridtune.strategies.noise import Noise, pool_draws

SOURCES = ("transferred", "own", "both")


def _effects(pools: list, ivp: str, own_share: float):
    found = kernel_effects.effects_of([p.frame for p in pools if p.key[1] != ivp])
    return None if found is None else replace(found, own=found.own * own_share)


def _direction(source, target, noise: Noise | None, seeds: int, stop: float,
               own_share: float = 1.0) -> dict:
    """Hybrid without a model on every whole pool of the target, per source of its effects."""
    theirs, mine = whole_pools(source.rows), whole_pools(target.rows)
    found = {name: {"measured": [], "loss": []} for name in SOURCES}
    for ivp in sorted({p.key[1] for p in mine}):
        effects = {"transferred": _effects(theirs, ivp, own_share),
                   "own": _effects(mine, ivp, own_share),
                   "both": _effects(theirs + mine, ivp, own_share)}
        if any(e is None for e in effects.values()):
            continue
        for pool in (p for p in mine if p.key[1] == ivp):
            for name, fitted in effects.items():
                prior = replay.hybrid_prior([pool], None, effects=fitted)
                for seed in range(seeds):
                    result = replay.hybrid_together([pool], None, stop, prior=prior,
                                                    errors=[pool_draws(noise, seed, pool)])[0]
                    found[name]["measured"].append(len(result.order))
                    found[name]["loss"].append(metrics.pool_loss(pool.times, result.chosen))
    summary = {name: {"measured_mean": float(np.mean(v["measured"])) if v["measured"] else math.nan,
                      "loss_pct_mean": 100 * float(np.mean(v["loss"])) if v["loss"] else math.nan,
                      "loss_pct_p90": (100 * float(np.percentile(v["loss"], 90)) if v["loss"]
                                       else math.nan),
                      "replays": len(v["measured"])} for name, v in found.items()}
    own = summary["own"]["measured_mean"]
    return {"from": source.name, "to": target.name, **summary,
            "ratio_to_own": summary["transferred"]["measured_mean"] / own if own else math.nan}


def effects_transfer(a, b, noise_a: Noise | None, noise_b: Noise | None, seeds: int,
                     stop: float, own_share: float = 1.0) -> list[dict]:
    """Both directions between two hosts' ground truths (Host records)."""
    return in_parallel.mapped(_one_way, (seeds, stop, own_share),
                              [(a, b, noise_b), (b, a, noise_a)])


def _one_way(setting: tuple, hosts: tuple) -> dict:
    seeds, stop, own_share = setting
    source, target, noise = hosts
    return _direction(source, target, noise, seeds, stop, own_share)
