"""What a space-filling share of a tuning run's measurements buys, one IVP left out at a time.

For each IVP left out, a model trained only on what runs with that share would have measured of the
other IVPs, scored on the left-out IVP (accuracy) and as hybrid's prior there (measurements and loss
under noise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hybridtune.describe.strategy import HYBRID_STOP, Strategy
from hybridtune.errors import RequestError
from hybridtune.learn.table import CONFIG, Rows
from hybridtune.learn.train import MIN_ROWS, fit
from hybridtune.strategies import replay
from hybridtune.strategies.judged_numbers import LOSS_WITHIN
from hybridtune.strategies.leave_one_out import accuracy_of, whole_pools
from hybridtune.strategies.noise import Noise, pool_draws

SHARES = (0.0, 0.1, 0.25, 0.5)
TRAINED_BY = Strategy("preselect", 5.0)     # the default scenario's strategy: what users store


def measured_by(pools: list, spec: Strategy) -> set:
    """(method, ivp, n, threads, variant) of every variant the strategy measures on the pools."""
    out = set()
    for pool in pools:
        variants = pool.frame["variant"].to_numpy()
        out |= {(*pool.key, variants[row]) for row in replay.run(pool, spec).order}
    return out


def share_value(rows: Rows, shares=SHARES, noise: Noise | None = None, seeds: int = 1,
                stop: float = HYBRID_STOP, trained_by: Strategy = TRAINED_BY) -> list[dict]:
    """Per share: the measurements per configuration the training runs took, and over the IVPs
    left out in turn the model's accuracy (median relative error, Kendall tau) and hybrid's
    replays with it (measured, mean loss, share of configurations within LOSS_WITHIN)."""
    pools = whole_pools(rows)
    ivps = sorted({p.key[1] for p in pools})
    if len(ivps) < 2:
        raise RequestError(f"the store's whole pools cover {len(ivps)} IVP(s); leaving one out "
                           "needs at least two")
    keys = list(zip(*(rows.frame[c] for c in (*CONFIG, "variant"))))
    seeds = max(1, seeds) if noise is not None else 1
    out = []
    for share in shares:
        spec = replace(trained_by, sample=share)
        taken = measured_by(pools, spec)
        scored = [found for ivp in ivps
                  if (found := _left_out(rows, pools, keys, taken, ivp, stop, noise, seeds))]
        if not scored:
            continue
        measured = [count for found in scored for count in found.measured]
        losses = np.array([loss for found in scored for loss in found.losses])
        out.append({"share": share, "strategy": spec.spelling,
                    "training_measured_per_configuration": len(taken) / len(pools),
                    "ivps": len(scored),
                    "median_rel_error": float(np.mean([f.median_rel_error for f in scored])),
                    "kendall_tau": float(np.mean([f.kendall_tau for f in scored])),
                    "hybrid_measured_mean": float(np.mean(measured)),
                    "hybrid_loss_pct_mean": float(100 * losses.mean()),
                    "hybrid_frac_loss_le_3pct": float(np.mean(losses <= LOSS_WITHIN))})
    return out


@dataclass(frozen=True)
class ScoreOnLeftOutIvp:
    """One IVP left out: the model's accuracy there and hybrid's replays with it as prior."""
    median_rel_error: float
    kendall_tau: float
    measured: tuple             # per replay, the measurements it took
    losses: tuple               # per replay, its chosen variant's time over the best, less 1


def _left_out(rows: Rows, pools: list, keys: list, taken: set, ivp: str, stop: float,
              noise: Noise | None, seeds: int) -> ScoreOnLeftOutIvp | None:
    """The model trained on what was taken of the other IVPs, scored on ivp (None: too few rows)."""
    keep = [key in taken and key[1] != ivp for key in keys]
    train = Rows(rows.frame[keep], rows.feature_schema, rows.machine_sha256)
    if len(train.measured) < MIN_ROWS:
        return None
    gp = fit(train, "gp", left_out=ivp)
    test = rows.measured[rows.measured["ivp"] == ivp].reset_index(drop=True)
    correction, _ = gp.correction(test["variant"].tolist(), test["features"].tolist())
    found = accuracy_of(test, {"gp": test["predicted_s"].to_numpy(float)
                               * np.exp(correction)})["gp"]
    measured, losses = [], []
    mine = [p for p in pools if p.key[1] == ivp]
    for method in dict.fromkeys(p.key[0] for p in mine):
        group = [p for p in mine if p.key[0] == method]
        prior = replay.hybrid_prior(group, gp)
        for seed in range(seeds):
            drawn = None if noise is None else \
                [pool_draws(noise, seed, p) for p in group]
            for pool, result in zip(group, replay.hybrid_together(
                    group, gp, stop, errors=drawn, prior=prior)):
                measured.append(len(result.order))
                losses.append(pool.times[result.chosen] / pool.times.min() - 1)
    return ScoreOnLeftOutIvp(found["median_rel_error"], found["kendall_tau"], tuple(measured),
                        tuple(losses))
