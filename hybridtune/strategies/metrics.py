"""Strategy metrics, the measurements an order takes to near the best, the methodology score.

The paper's strategy metrics (|L|, overhead, gain over RunAll, loss), the measurements an order
takes to get within a share of the best, and the autotuning literature's methodology score against
random search.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

LOSS_CI = 0.02           # a loss is zero when both intervals are this narrow and overlap
WITHIN = 0.01            # B: random search expected within this of the optimum


def loss(chosen: dict, best: dict) -> float:
    """t_chosen / t_best - 1 of two measurements (median_s, ci_rel, ci_low_s, ci_high_s)."""
    narrow = chosen["ci_rel"] <= LOSS_CI and best["ci_rel"] <= LOSS_CI
    overlap = chosen["ci_low_s"] <= best["ci_high_s"] and best["ci_low_s"] <= chosen["ci_high_s"]
    if narrow and overlap:
        return 0.0
    return max(chosen["median_s"] / best["median_s"] - 1, 0.0)


def pool_loss(pool_times, chosen: int) -> float:
    """How much slower the chosen variant (a position in pool_times) is than the pool's best."""
    return max(pool_times[chosen] / np.min(pool_times) - 1, 0.0)


def overhead(times, t_best: float) -> float:
    """(sum_L t - |L| t_best) / (|L| t_best)."""
    return (sum(times) - len(times) * t_best) / (len(times) * t_best)


def gain_over_run_all(times, t_chosen: float, pool_times) -> float:
    """(t_RA - t_AT) / t_RA: t_RA the pool's sum, t_AT = sum_L t + (pool - |L|) t_chosen."""
    t_ra = sum(pool_times)
    t_at = sum(times) + (len(pool_times) - len(times)) * t_chosen
    return (t_ra - t_at) / t_ra


def measurements_to_within(pool_times, order, within: float) -> int | None:
    """How many measurements in this order (positions in pool_times) reach a variant within
    `within` of the pool's best; None where it never does."""
    limit = np.min(pool_times) * (1 + within)
    return next((count for count, i in enumerate(order, 1) if pool_times[i] <= limit), None)


def random_search_expectation(pool_times, draws: int) -> np.ndarray:
    """R(x), x = 1..draws: the expected best of x draws without replacement from the pool."""
    ordered = np.sort(np.asarray(pool_times, float))
    size = len(ordered)
    x = np.arange(1, draws + 1)[:, None]
    r = np.arange(1, size + 1)[None, :]
    # P(the best of x draws is the r-th fastest) = C(N - r, x - 1) / C(N, x)
    possible = size - r >= x - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        log_p = (gammaln(size - r + 1) - gammaln(x) - gammaln(np.maximum(size - r - x + 2, 1))
                 - (gammaln(size + 1) - gammaln(x + 1) - gammaln(size - x + 1)))
    return np.where(possible, np.exp(np.where(possible, log_p, 0.0)), 0.0) @ ordered


def random_curve(pool_times) -> np.ndarray:
    """R(x) for x = 1..B (B the horizon: the least x at which random search is expected within
    WITHIN of the optimum): what methodology_score compares a search with, once per pool."""
    expected = random_search_expectation(pool_times, len(pool_times))
    draws = int(np.argmax(expected <= min(pool_times) * (1 + WITHIN))) + 1
    return expected[:draws]


def horizon(pool_times) -> int:
    """B: the least x at which random search is expected within WITHIN of the optimum."""
    return len(random_curve(pool_times))


def best_found(order_times, draws: int) -> np.ndarray:
    """S(x), x = 1..draws: the best time among the first x measured, held after the last."""
    found = np.minimum.accumulate(np.asarray(order_times, float))
    if len(found) >= draws:
        return found[:draws]
    return np.concatenate([found, np.full(draws - len(found), found[-1])])


def methodology_score(order_times, pool_times, expected: np.ndarray | None = None) -> float:
    """Mean over x = 1..B of (R(x) - S(x)) / (R(x) - t_best), where R(x) > t_best; expected:
    random_curve(pool_times) where already made."""
    expected = random_curve(pool_times) if expected is None else expected
    t_best = min(pool_times)
    found = best_found(order_times, len(expected))
    useful = expected > t_best * (1 + 1e-12)
    if not useful.any():
        return 0.0
    return float(np.mean((expected[useful] - found[useful]) / (expected[useful] - t_best)))


def bootstrap_interval(values, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean over resampled configurations."""
    values = np.asarray(values, float)
    if len(values) == 0:
        return (math.nan, math.nan)
    generator = np.random.default_rng(seed)
    means = generator.choice(values, size=(resamples, len(values)), replace=True).mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))
