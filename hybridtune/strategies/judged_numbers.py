"""The judge's numbers: a strategy's metrics on a pool over its replays and over configurations."""

from __future__ import annotations

import numpy as np

from hybridtune.strategies import metrics, replay

FIRST_WITHIN = 0.05
LOSS_WITHIN = 0.03       # a loss this small counts as finding the best (the noise floor of a timing)
SPREAD = (10, 90)        # percentiles over noise seeds
CURVE = 64               # best-found curves over the first this many measurements


def pool_numbers(pool: replay.StoredPool, replays: list) -> dict:
    """The metrics of one strategy on one pool, judged by the pool's times (the mean of passes):
    their mean over its replays (one per noise seed) and, in `seeds`, each replay's."""
    times = pool.times
    t_best = times.min()
    expected = metrics.random_curve(times)
    values = []
    for r in replays:
        measured = times[list(r.order)]
        values.append({
            "measured": len(r.order),
            "retimed": len(r.retimed),
            "loss": metrics.pool_loss(times, r.chosen),
            "overhead": metrics.overhead(measured, t_best),
            "gain": metrics.gain_over_run_all(measured, times[r.chosen], times),
            "score": metrics.methodology_score(measured, times, expected),
            "curve": metrics.best_found(measured, min(CURVE, len(times))) / t_best,
            "first_within": bool(times[r.order[0]] <= t_best * (1 + FIRST_WITHIN))})
    out = {key: float(np.mean([v[key] for v in values])) for key in values[0] if key != "curve"}
    out["curve"] = np.mean([v["curve"] for v in values], axis=0).tolist()
    out["seeds"] = [{key: v[key] for key in ("measured", "loss", "score")} for v in values]
    return out


def strategy_summary(per_config: list[dict], seeds: int) -> dict:
    """A strategy's metrics over the configurations: of the means over noise seeds, and with
    several seeds the SPREAD percentiles over seeds of each seed's summary."""
    out = _summary_of(per_config)
    if seeds > 1:
        each = [_summary_of([{**c, **c["seeds"][k]} for c in per_config], False)
                for k in range(seeds)]
        out["over_seeds"] = {name: [float(np.percentile([e[name] for e in each], q))
                                    for q in SPREAD]
                             for name in ("measured_mean", "loss_pct_mean", "loss_pct_max",
                                          "frac_loss_le_3pct", "score")}
    return out


def _summary_of(per_config: list[dict], each_seed: bool = True) -> dict:
    """A strategy's metrics over configurations; the loss's distribution over every
    (configuration, noise seed) replay where each_seed and the seeds are held."""
    losses = np.array([seed["loss"] for c in per_config
                       for seed in (c.get("seeds", [c]) if each_seed else [c])])
    scores = [c["score"] for c in per_config]
    low, high = metrics.bootstrap_interval(scores)
    return {"configurations": len(per_config),
            "measured_mean": float(np.mean([c["measured"] for c in per_config])),
            "retimed_mean": float(np.mean([c.get("retimed", 0) for c in per_config])),
            "loss_pct_max": float(100 * losses.max()), "loss_pct_mean": float(100 * losses.mean()),
            "loss_pct_median": float(100 * np.median(losses)),
            "loss_pct_p90": float(100 * np.percentile(losses, 90)),
            "frac_loss_le_1pct": float(np.mean(losses <= 0.01)),
            "frac_loss_le_3pct": float(np.mean(losses <= LOSS_WITHIN)),
            "overhead_pct_mean": float(100 * np.mean([c.get("overhead", 0) for c in per_config])),
            "gain_pct_mean": float(100 * np.mean([c.get("gain", 0) for c in per_config])),
            "score": float(np.mean(scores)), "score_interval": [low, high]}


def to_best(counts: list) -> dict:
    """How many measurements hybrid's order took to reach a variant within LOSS_WITHIN of the best
    (per configuration and noise seed): what a stop that knew the best would measure (None where
    its order never got there)."""
    reached = [c for c in counts if c is not None]
    summary = {"mean": float(np.mean(reached)), "median": float(np.median(reached)),
               "max": int(max(reached))} if reached else {}
    return {"per_configuration": counts, "reached": len(reached), **summary}


def mean_curve(curves: list) -> list:
    """The mean of curves of unequal length, each held at its last value."""
    width = max(len(c) for c in curves)
    return np.mean([c + [c[-1]] * (width - len(c)) for c in curves], axis=0).tolist()
