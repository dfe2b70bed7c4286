"""The replay and the evaluation are honest: no time a strategy has not measured reaches it, no row of a left-out IVP reaches a fit."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.learn import train
from hybridtune.learn.table import Rows
from hybridtune.strategies import leave_one_out as evaluation
from hybridtune.strategies import replay
from hybridtune.strategies.leave_one_out import whole_pools

KEY = ("radauIIA7", "Cusp", 6000, 1, 1)


@pytest.fixture(scope="module")
def gp_without_cusp(fixture_rows):
    frame = fixture_rows.frame
    return train.fit(Rows(frame[frame["ivp"] != "Cusp"], fixture_rows.feature_schema,
                          fixture_rows.machine_sha256), "gp", left_out="Cusp")


def poisoned(pool: replay.StoredPool, measured) -> replay.StoredPool:
    """The pool with every time the replay did not measure made the fastest by far."""
    times = pool.times.copy()
    others = np.setdiff1d(np.arange(len(times)), list(measured))
    times[others] = times.min() / 1000
    return replay.StoredPool(pool.key, pool.frame.assign(median_s=times))


@pytest.mark.parametrize("strategy", ["hybrid", "preselect:5", "top_k:7", "random:9:2"])
def test_poisoning_what_was_not_measured_changes_nothing(fixture_rows, gp_without_cusp, strategy):
    from hybridtune.describe.strategy import parse_strategy
    pool = next(p for p in whole_pools(fixture_rows) if p.key == KEY)

    def run(on):
        if strategy == "hybrid":
            return replay.hybrid(on, gp_without_cusp)
        return replay.run(on, parse_strategy(strategy))

    first = run(pool)
    assert 0 < len(first.order) < len(pool.frame)
    again = run(poisoned(pool, first.order))
    assert again.order == first.order and again.chosen == first.chosen


def test_a_fit_handed_a_row_of_the_left_out_ivp_raises(fixture_rows):
    with pytest.raises(train.LeftOutRow, match="leaves Cusp out was handed"):
        train.fit(fixture_rows, "linear", left_out="Cusp")


def test_evaluate_fits_each_model_without_its_left_out_ivp(fixture_rows, monkeypatch):
    seen = []
    real = train.fit

    def spy(rows, kind, *args, left_out=None, **kwargs):
        seen.append((left_out, set(rows.frame["ivp"])))
        return real(rows, kind, *args, left_out=left_out, **kwargs)

    monkeypatch.setattr(evaluation, "fit", spy)
    evaluation.evaluate(fixture_rows, max_rows=300)
    ivps = set(fixture_rows.frame["ivp"])
    assert {left for left, _ in seen} == ivps
    assert all(left not in trained and trained == ivps - {left} for left, trained in seen)
