"""The judge's noise: fitted to a store's passes, replayed from them, and checked against the machine (the shipped AMD ground truth: two passes of every variant)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.strategy import parse_strategy
from hybridtune.learn.table import joined_rows
from hybridtune.store import Store
from hybridtune.strategies import noise, replay
from hybridtune.strategies.noise_check import pass_choice_loss
from hybridtune.strategies.noise_model import NoiseModel, fit_noise

AMD = PROJECT_ROOT / "data" / "groundtruth" / "amd-epyc" / "ground-truth.h5"


@pytest.fixture(scope="module")
def amd():
    with Store.open(AMD, "r") as store:
        return store.frame("variant_predictions"), store.frame("measurements")


def _pairs(d: np.ndarray) -> pd.DataFrame:
    size = len(d)
    return pd.DataFrame({"method": "m", "ivp": "i", "n": 100, "ranks": 1, "threads": 1,
                         "variant": [f"v{i}" for i in range(size)], "one": 1.0,
                         "two": np.exp(d), "ratio": d, "shift": 0.0, "order": np.arange(size)})


def test_a_fitted_model_recovers_the_spread_and_drift_it_was_drawn_with():
    truth = NoiseModel(0.02, 0.6, 0.0, (), 0.01, 0)
    generator = np.random.default_rng(5)
    one, two = (truth.draw(generator, 20000)[:, 0] for _ in range(2))
    fitted = fit_noise(_pairs(two - one))
    assert fitted.spread == pytest.approx(0.02, rel=0.05)
    assert fitted.drift == pytest.approx(0.6, abs=0.05)
    assert fitted.tail_rate < 0.01       # a normal core: hardly a pair beyond 3 spreads


def test_slow_tails_are_drawn_only_where_the_passes_show_them():
    generator = np.random.default_rng(7)
    core = 0.01 * generator.standard_normal(4000)
    slowed = core.copy()
    slowed[::20] += 0.3                  # every 20th pair: one pass 30% slow
    quiet, tailed = fit_noise(_pairs(core)), fit_noise(_pairs(slowed))
    assert quiet.tail_rate < 0.005 and tailed.tail_rate == pytest.approx(0.025, abs=0.005)
    drawn = tailed.draw(np.random.default_rng(1), 20000)
    assert drawn.shape == (20000, 2) and drawn[:, 0].max() > 0.25 and drawn[:, 0].min() > -0.1
    assert 1.4826 * np.median(np.abs(drawn[:, 1])) == pytest.approx(tailed.retime_spread, rel=0.05)


def test_the_model_reproduces_the_loss_of_choosing_by_one_pass_and_judging_by_the_other(amd):
    _, measurements = amd
    found = noise.measured(measurements)
    checked = pass_choice_loss(noise.pass_ratios(measurements), found.models)
    assert checked["configurations"] == 19
    assert checked["observed_pct"] == pytest.approx(1.08, abs=0.01)
    assert abs(checked["replayed_pct"] - checked["observed_pct"]) <= 0.3


def test_a_pool_timed_twice_is_replayed_from_its_passes(amd):
    predictions, measurements = amd
    found = noise.measured(measurements)
    rows = joined_rows(predictions, measurements)
    pools = replay.configuration_pools(rows)
    pool = pools[0]
    passes = found.passes[tuple(pool.key)]
    variants = pool.frame["variant"].tolist()
    for seed in (0, 1, 2):
        drawn = noise.pool_draws(found, seed, pool)
        one = np.array([passes[v][seed % 2] for v in variants])
        assert drawn[:, 0] == pytest.approx(np.log(one / pool.times))
    # two seeds of one parity replay the same pass; their re-timings differ
    assert not np.array_equal(noise.pool_draws(found, 0, pool)[:, 1],
                              noise.pool_draws(found, 2, pool)[:, 1])


def test_a_search_replaying_one_pass_is_told_that_pass_s_interval_not_one_spanning_both(amd):
    predictions, measurements = amd
    found = noise.measured(measurements)
    pool = replay.configuration_pools(joined_rows(predictions, measurements))[0]
    told: list = []

    class Recording:                     # a search that measures the first ten rows
        ended_by = ""

        def __init__(self):
            self.left = list(range(10))

        def ask(self, count):
            if not self.left:
                self.ended_by = "done"
                return []
            return [self.left.pop(0)]

        def tell(self, position, seconds, ci_rel=None):
            told.append(ci_rel)

    for seed in (0, 1):
        told.clear()
        replay.drive(pool, Recording(), list(range(len(pool.frame))),
                     noise.pool_draws(found, seed, pool))
        passes = found.passes[tuple(pool.key)]
        own = [passes[v][2 + seed] for v in pool.frame["variant"][:10]]
        assert told == pytest.approx(own)
    # the pool's own interval spans both passes: wider than either pass's where they disagree
    spanning = pool.frame["ci_rel"].to_numpy(float)[:10]
    assert np.any(spanning > np.array(own) + 0.01)


def test_a_variant_timed_twice_in_a_pool_timed_twice_only_in_part_is_told_one_pass_s_interval(amd):
    predictions, measurements = amd
    found = noise.measured(measurements)
    pool = replay.configuration_pools(joined_rows(predictions, measurements))[0]
    key = tuple(pool.key)
    twice = dict(list(found.passes[key].items())[::2])       # every other variant timed twice
    partly = dataclasses.replace(found, passes={**found.passes, key: twice})
    spanning = pool.frame["ci_rel"].to_numpy(float)
    for seed in (0, 1):
        drawn = noise.pool_draws(partly, seed, pool)
        # the first timings are drawn, not a stored pass
        assert not np.allclose(drawn[:, 0], noise.pool_draws(found, seed, pool)[:, 0])
        expected = [twice[v][2 + seed] if v in twice else spanning[row]
                    for row, v in enumerate(pool.frame["variant"])]
        assert drawn.ci_rel == pytest.approx(expected)
    assert any(twice[v][2] < spanning[row] - 0.01 for row, v in enumerate(pool.frame["variant"])
               if v in twice)


def test_run_all_replayed_from_the_passes_loses_no_more_than_the_passes_imply(amd):
    predictions, measurements = amd
    found = noise.measured(measurements)
    losses, implied = [], []
    for pool in replay.configuration_pools(joined_rows(predictions, measurements)):
        times = pool.times
        passes = found.passes[tuple(pool.key)]
        for seed in (0, 1):
            chosen = replay.run(pool, parse_strategy("run_all"),
                                noise.pool_draws(found, seed, pool)).chosen
            losses.append(times[chosen] / times.min() - 1)
            by_pass = np.array([passes[v][seed] for v in pool.frame["variant"]])
            implied.append(times[int(np.argmin(by_pass))] / times.min() - 1)
    # racing the contenders can only help a choice by one pass: judged by the mean of passes
    assert np.mean(losses) <= np.mean(implied) + 0.002
    assert 0 < np.mean(implied) < 0.03
    assert math.isfinite(np.mean(losses))
