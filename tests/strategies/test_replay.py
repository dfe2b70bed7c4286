"""The planned strategies replayed on a hand-made pool: what each measures, in which order, and what it chooses."""

from __future__ import annotations

import pandas as pd

from hybridtune.describe.strategy import parse_strategy
from hybridtune.strategies import replay


def _toy_pool() -> replay.StoredPool:
    frame = pd.DataFrame({
        "variant": ["e", "a", "d", "b", "c", "f"],
        "predicted_s": [1.00, 1.04, 1.08, 1.20, 1.04, 2.0],
        "median_s": [3.0, 2.0, 1.0, 4.0, 5.0, 0.5],
        "ci_rel": [0.01] * 6})
    return replay.StoredPool(("m", "ivp", 100, 1), frame)


def planned(pool, spelling: str) -> replay.Replay:
    return replay.run(pool, parse_strategy(spelling))


def test_top_k_measures_the_k_best_predicted_in_order():
    pool = _toy_pool()
    result = planned(pool, "top_k:3")
    assert result.order == (0, 1, 4)      # ties of prediction by variant name: a before c
    assert result.chosen == 1
    assert planned(pool, "top_k:1").order == (0,)


def test_preselect_measures_every_variant_predicted_within_the_percent():
    pool = _toy_pool()
    assert planned(pool, "preselect:5").order == (0, 1, 4)
    result = planned(pool, "preselect:10")
    assert result.order == (0, 1, 4, 2) and result.chosen == 2
    assert planned(pool, "preselect:0").order == (0,)


def test_random_k_measures_k_distinct_variants_reproducibly():
    pool = _toy_pool()
    orders = {planned(pool, f"random:3:{seed}").order for seed in range(20)}
    assert all(len(set(order)) == 3 for order in orders) and len(orders) > 5
    result = planned(pool, "random:3:7")
    assert result == planned(pool, "random:3:7")
    assert result.chosen == min(result.order, key=lambda i: pool.times[i])


def test_run_all_measures_every_variant_best_predicted_first_and_chooses_the_fastest():
    pool = _toy_pool()
    result = planned(pool, "run_all")
    assert [pool.frame["variant"][i] for i in result.order] == ["e", "a", "c", "d", "b", "f"]
    assert result.chosen == 5


def test_fixed_variant_measures_the_named_one_once_else_the_top_prediction():
    pool = _toy_pool()
    assert replay.fixed_variant(pool, "d") == replay.Replay((2,), 2)
    assert replay.fixed_variant(pool, "missing") == replay.Replay((0,), 0)
