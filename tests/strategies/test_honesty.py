"""The replay and the evaluation are honest: no time a strategy has not measured reaches it, no row of a left-out IVP reaches a fit."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.learn import train
from hybridtune.learn.table import Rows
from hybridtune.strategies import leave_one_out as evaluation
from hybridtune.strategies import in_parallel, replay
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


def _replayed(strategy: str, pool, gp):
    from hybridtune.describe.strategy import parse_strategy
    if strategy == "hybrid":
        return replay.hybrid(pool, gp)
    return replay.run(pool, parse_strategy(strategy))


@pytest.mark.parametrize("strategy", ["hybrid", "tpe:8:1", "preselect:5", "top_k:7", "random:9:2"])
def test_poisoning_what_was_not_measured_changes_nothing(fixture_rows, gp_without_cusp, strategy):
    pool = next(p for p in whole_pools(fixture_rows) if p.key == KEY)
    first = _replayed(strategy, pool, gp_without_cusp)
    assert 0 < len(first.order) < len(pool.frame)
    again = _replayed(strategy, poisoned(pool, first.order), gp_without_cusp)
    assert again.order == first.order and again.chosen == first.chosen


def reversed_times(pool: replay.StoredPool) -> replay.StoredPool:
    """The pool with its times handed out in reverse order: the fastest becomes the slowest."""
    times = pool.times
    ranks = np.argsort(np.argsort(times))
    return replay.StoredPool(pool.key, pool.frame.assign(median_s=np.sort(times)[::-1][ranks]))


@pytest.mark.parametrize("strategy", ["preselect:5", "top_k:7", "random:9:2"])
def test_fixed_order_strategies_are_unaffected_because_they_never_read_a_time(
        fixture_rows, gp_without_cusp, strategy):
    # their order is fixed before measuring: even reversing every time leaves it as it was, so
    # the poisoning above could not have changed them whatever they were told
    pool = next(p for p in whole_pools(fixture_rows) if p.key == KEY)
    first = _replayed(strategy, pool, gp_without_cusp)
    assert _replayed(strategy, reversed_times(pool), gp_without_cusp).order == first.order


@pytest.mark.parametrize("strategy", ["hybrid", "tpe:8:1"])
def test_adaptive_strategies_read_what_they_measure(fixture_rows, gp_without_cusp, strategy):
    # what they are told steers them: reversing the times changes what they measure, so the
    # poisoning test holds them to something
    pool = next(p for p in whole_pools(fixture_rows) if p.key == KEY)
    first = _replayed(strategy, pool, gp_without_cusp)
    assert _replayed(strategy, reversed_times(pool), gp_without_cusp).order != first.order


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
    # one process: the spy records here (forked workers run the same fold function)
    monkeypatch.setattr(in_parallel, "cores", lambda: 1)
    evaluation.evaluate(fixture_rows, max_rows=300)
    ivps = set(fixture_rows.frame["ivp"])
    assert {left for left, _ in seen} == ivps
    assert all(left not in trained and trained == ivps - {left} for left, trained in seen)
