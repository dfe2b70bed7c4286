"""Strategy metrics: random search's expectation by enumeration, its horizon, best-found curves, the methodology score, loss, overhead, gain and the bootstrap interval."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hybridtune.strategies import metrics

POOL = [3.1, 1.7, 2.4, 1.2, 5.0, 1.25, 2.0]


def _enumerated(pool, x: int) -> float:
    """The mean best of every draw of x from the pool."""
    bests = [min(draw) for draw in itertools.combinations(pool, x)]
    return sum(bests) / len(bests)


@pytest.mark.parametrize("pool", [POOL, [2.0, 1.0, 2.0, 1.0, 3.0, 3.0, 1.5]], ids=["distinct", "ties"])
def test_random_search_expectation_equals_exact_enumeration(pool):
    expected = metrics.random_search_expectation(pool, len(pool))
    np.testing.assert_allclose(expected, [_enumerated(pool, x) for x in range(1, len(pool) + 1)],
                               rtol=1e-12)
    assert expected[0] == pytest.approx(np.mean(pool)) and expected[-1] == pytest.approx(min(pool))


def test_random_search_expectation_agrees_with_sampling_on_a_larger_pool():
    generator = np.random.default_rng(0)
    pool = generator.lognormal(size=40)
    draws = np.array([[generator.choice(pool, size=x, replace=False).min() for x in (2, 5, 12)]
                      for _ in range(4000)])
    expected = metrics.random_search_expectation(pool, 12)[[1, 4, 11]]
    np.testing.assert_allclose(draws.mean(axis=0), expected, rtol=0.03)


def test_horizon_is_the_first_draw_count_within_one_percent():
    expected = [_enumerated(POOL, x) for x in range(1, len(POOL) + 1)]
    b = metrics.horizon(POOL)
    assert expected[b - 1] <= min(POOL) * (1 + metrics.WITHIN) < expected[b - 2]
    # R(6) = (6 * 1.2 + 1.25) / 7 is within 1% of 1.2; R(5) is not
    assert b == 6
    assert metrics.horizon([2.0, 2.0, 2.0]) == 1
    assert metrics.horizon([1.0, 1.005, 9.0]) == 2


def test_best_found_is_the_running_minimum_held_after_the_last():
    np.testing.assert_array_equal(metrics.best_found([3.0, 1.0, 2.0], 5), [3, 1, 1, 1, 1])
    np.testing.assert_array_equal(metrics.best_found([3.0, 4.0, 2.0, 1.0], 3), [3, 3, 2])


def test_methodology_score_is_one_for_the_best_first_and_zero_for_random_search_itself():
    best_first = [1.2, 5.0]
    assert metrics.methodology_score(best_first, POOL) == pytest.approx(1.0)
    random_itself = metrics.random_search_expectation(POOL, len(POOL))
    assert metrics.methodology_score(random_itself, POOL) == pytest.approx(0.0, abs=1e-12)
    worst_first = sorted(POOL, reverse=True)
    assert metrics.methodology_score(worst_first, POOL) < 0
    # a pool of equal times has nothing to find
    assert metrics.methodology_score([2.0], [2.0, 2.0]) == 0.0


def _measurement(median: float, ci_rel: float) -> dict:
    return {"median_s": median, "ci_rel": ci_rel, "ci_low_s": median * (1 - ci_rel / 2),
            "ci_high_s": median * (1 + ci_rel / 2)}


def test_loss_is_zero_for_overlapping_narrow_intervals_else_the_ratio():
    best = _measurement(1.00, 0.02)
    assert metrics.loss(_measurement(1.01, 0.02), best) == 0.0
    # narrow but apart
    assert metrics.loss(_measurement(1.05, 0.01), best) == pytest.approx(0.05)
    # overlapping but wide
    assert metrics.loss(_measurement(1.01, 0.10), best) == pytest.approx(0.01)
    assert metrics.loss(_measurement(1.30, 0.30), _measurement(1.0, 0.30)) == pytest.approx(0.30)
    # a faster chosen one loses nothing
    assert metrics.loss(_measurement(0.9, 0.10), best) == 0.0


def test_overhead_and_gain_over_run_all_on_hand_computed_pools():
    assert metrics.overhead([2.0, 3.0], 1.0) == pytest.approx(1.5)        # (5 - 2) / 2
    assert metrics.overhead([1.0], 1.0) == 0.0
    pool = [2.0, 1.0, 4.0, 3.0]
    # t_RA = 10, t_AT = (2 + 1) + 2 * 1 = 5
    assert metrics.gain_over_run_all([2.0, 1.0], 1.0, pool) == pytest.approx(0.5)
    assert metrics.gain_over_run_all(pool, 1.0, pool) == 0.0
    # measuring the slow ones and choosing a slow one costs more than running all
    assert metrics.gain_over_run_all([4.0], 4.0, pool) == pytest.approx((10 - 16) / 10)


def test_bootstrap_interval_contains_the_mean():
    values = np.random.default_rng(2).normal(0.4, 0.3, size=25)
    low, high = metrics.bootstrap_interval(values)
    assert low < values.mean() < high
    assert high - low < 0.5
    assert metrics.bootstrap_interval([0.7, 0.7]) == (pytest.approx(0.7), pytest.approx(0.7))
    assert all(math.isnan(v) for v in metrics.bootstrap_interval([]))


def test_measurements_an_order_takes_to_get_within_a_share_of_the_best():
    times = np.array([1.0, 2.0, 0.5])
    assert metrics.measurements_to_within(times, (1, 2, 0), 0.01) == 2
    assert metrics.measurements_to_within(times, (0, 1), 0.01) is None
    assert metrics.measurements_to_within(times, (0, 1), 1.0) == 1   # 1.0 <= 0.5 * 2
