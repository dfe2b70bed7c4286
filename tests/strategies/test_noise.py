"""The replay's noise: measured from a store's passes (or the shipped model for one pass, and said so; too few pairs refused), drawn alike for every strategy, and a noisy replay ending as a live run does."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hybridtune.describe.strategy import parse_strategy
from hybridtune.strategies import noise, replay


def _passes(count: int, shift: float) -> pd.DataFrame:
    """count variants of one configuration timed in two runs, the second `shift` slower in log
    time plus a known error per variant."""
    rows = []
    for i in range(count):
        error = 0.02 * ((i % 5) - 2)
        for run, seconds in (("p1", 1.0 + i / 100), ("p2", (1.0 + i / 100) * math.exp(shift + error))):
            rows.append({"row_id": len(rows), "id": f"v{i}", "method": "m", "ivp": "i", "n": 600,
                         "threads": 1, "status": "ok", "median_s": seconds, "ci_rel": 0.01,
                         "ci_low_s": seconds, "ci_high_s": seconds, "timing": "alone",
                         "run_id": run, "generator_version": 1, "code_sha256": f"c{i}",
                         "compiler_flags": "-O3", "hardware_id": "h"})
    return pd.DataFrame(rows)


def test_the_noise_of_two_passes_is_their_ratio_less_the_common_shift():
    found = noise.measured(_passes(40, shift=0.07))
    assert found.pairs == 40 and found.source.startswith("measured: 40 pairs")
    expected = np.array([0.02 * ((i % 5) - 2) for i in range(40)]) / math.sqrt(2)
    assert sorted(found.errors) == pytest.approx(sorted(np.concatenate([expected, -expected])))
    assert found.spread == pytest.approx(1.4826 * 0.02 / math.sqrt(2))


def test_passes_are_paired_in_the_order_the_store_holds_them_whatever_their_row_ids():
    # stores name rows by random hex ids: sorting by them would swap the passes of some variants
    passes = _passes(40, shift=0.07)
    passes["row_id"] = [f"{(7919 * i) % 997:03x}" for i in range(len(passes))]
    assert not passes["row_id"].is_monotonic_increasing
    found = noise.measured(passes)
    expected = np.array([0.02 * ((i % 5) - 2) for i in range(40)]) / math.sqrt(2)
    assert sorted(found.errors) == pytest.approx(sorted(np.concatenate([expected, -expected])))
    assert noise.pass_agreement(passes)["i"]["kendall_tau"] == pytest.approx(
        noise.pass_agreement(_passes(40, shift=0.07))["i"]["kendall_tau"])


def test_a_store_of_one_pass_draws_from_the_shipped_model_and_says_so():
    one_pass = _passes(40, shift=0.0)
    found = noise.measured(one_pass[one_pass["run_id"] == "p1"])
    assert found.model == noise.SHIPPED_NOISE and found.pairs == 0
    assert found.source.startswith("the store holds one pass: drawn from the shipped ground "
                                   "truth's noise model (spread 0.017")
    assert found.spread == pytest.approx(noise.SHIPPED_NOISE.spread, rel=0.1)
    drawn = noise.draws(found, 0, ("m", "i", 600, 1), 500, rounds=2)
    assert drawn.shape == (500, 3)
    assert np.std(drawn[:, 1:]) == pytest.approx(noise.SHIPPED_NOISE.retime_spread, rel=0.15)


def test_a_store_with_too_few_pairs_to_fit_its_noise_is_refused_naming_the_count():
    with pytest.raises(noise.TooFewPairs, match="the store holds 5 pairs of passes .* needs 30"):
        noise.measured(_passes(5, shift=0.0))


def test_two_passes_agree_as_kendall_tau_says_and_pools_of_few_pairs_are_left_out():
    from scipy.stats import kendalltau
    passes = _passes(40, shift=0.07)
    first, second = (passes[passes["run_id"] == run]["median_s"].to_numpy() for run in ("p1", "p2"))
    found = noise.pass_agreement(passes)
    assert found["i"]["kendall_tau"] == pytest.approx(kendalltau(first, second).statistic)
    assert 0 < found["i"]["kendall_tau"] < 1 and (found["i"]["pairs"], found["i"]["configurations"]) == (40, 1)
    assert noise.pass_agreement(_passes(5, shift=0.0)) == {}


def test_the_tau_ceiling_is_what_the_truth_reaches_against_the_mean_of_two_noisy_passes():
    from scipy.stats import kendalltau
    generator = np.random.default_rng(3)
    truth = generator.standard_normal(4000)
    for spread in (0.3, 1.0):
        one, two = (truth + spread * generator.standard_normal(4000) for _ in range(2))
        between = kendalltau(one, two).statistic
        reached = kendalltau(truth, (one + two) / 2).statistic
        assert noise.tau_ceiling(between) == pytest.approx(reached, abs=0.02)
        assert between < noise.tau_ceiling(between) < 1
    assert (noise.tau_ceiling(0.0), noise.tau_ceiling(1.0)) == pytest.approx((0.0, 1.0))


def test_every_strategy_meets_the_same_draws_and_no_noise_is_zero():
    shared = noise.shipped()
    one = noise.draws(shared, 3, ("m", "i", 600, 1), 10)
    assert one.shape == (10, 2) and np.array_equal(one, noise.draws(shared, 3, ("m", "i", 600, 1), 10))
    assert not np.array_equal(one, noise.draws(shared, 4, ("m", "i", 600, 1), 10))
    assert not np.array_equal(one, noise.draws(shared, 3, ("m", "i", 6000, 1), 10))
    assert not noise.draws(None, 3, ("m", "i", 600, 1), 4).any()


def test_a_noisy_replay_re_times_the_close_ones_and_chooses_by_the_re_timing():
    frame = pd.DataFrame({"variant": ["a", "b", "c", "d"], "predicted_s": [1.0, 1.1, 1.2, 1.3],
                          "median_s": [1.0, 1.02, 1.5, 3.0], "ci_rel": [0.01] * 4})
    pool = replay.StoredPool(("m", "i", 100, 1), frame)
    errors = np.log(np.array([[1.05, 1.01], [0.97, 1.08], [1.0, 1.0], [1.0, 1.0]]))
    result = replay.run(pool, parse_strategy("run_all"), errors)
    # b's first timing (0.99) beat a's (1.05): a lucky one; the race alone decides, and a's
    # re-timing (1.01) beats b's (1.10)
    assert result.order == (0, 1, 2, 3) and result.retimed == (1, 0) and result.chosen == 0
    luckier = np.log(np.array([[1.05, 1.12], [0.97, 1.08], [1.0, 1.0], [1.0, 1.0]]))
    assert replay.run(pool, parse_strategy("run_all"), luckier).chosen == 1
    # no noise: the stored times, the fastest chosen
    assert replay.run(pool, parse_strategy("run_all")).chosen == 0
