"""Leave-one-IVP-out evaluation on the fixture: every strategy replayed and summarised, accuracy per left-out IVP, nothing scored that was trained on."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from hybridtune.errors import RequestError
from hybridtune.strategies import noise, transfer
from hybridtune.strategies.leave_one_out import _with_other_sizes, evaluate, left_out, whole_pools
from hybridtune.learn.level import Levels, levels_of
from hybridtune.learn.table import Rows
from hybridtune.learn.train import configuration_keys, fit, pool_targets

IVPS = ("Cusp", "InverterChain", "Medakzo", "Wave1D")
SUMMARY = {"configurations", "measured_mean", "loss_pct_max", "loss_pct_mean", "frac_loss_le_3pct",
           "overhead_pct_mean", "gain_pct_mean", "score", "score_interval", "retimed_mean",
           "loss_pct_median", "loss_pct_p90", "frac_loss_le_1pct"}


@pytest.fixture(scope="module")
def evaluation(fixture_rows):
    return evaluate(fixture_rows)


def test_every_strategy_is_replayed_on_every_whole_pool(evaluation):
    strategies = evaluation.strategies
    k = round(strategies["hybrid"]["measured_mean"])
    assert list(strategies) == ["BestVariant", "RunAll+3 rounds", "RunAll", "preselect:5",
                                "preselect:10", "hybrid", "hybrid@12", "hybrid (no model)",
                                "hybrid (offline errors)",
                                f"top_k:{k}", f"random:{k}"]
    assert strategies["hybrid@12"]["measured_mean"] <= min(12, strategies["hybrid"]["measured_mean"])
    for name, summary in strategies.items():
        assert set(summary) == SUMMARY, name
        assert summary["configurations"] == 8
        low, high = summary["score_interval"]
        assert low <= summary["score"] <= high
        assert 0 <= summary["loss_pct_mean"] <= summary["loss_pct_max"]
        assert summary["loss_pct_median"] <= summary["loss_pct_p90"] <= summary["loss_pct_max"]
        assert 0 <= summary["frac_loss_le_1pct"] <= summary["frac_loss_le_3pct"] <= 1
    assert strategies[f"top_k:{k}"]["measured_mean"] == strategies[f"random:{k}"]["measured_mean"] == k
    assert strategies["BestVariant"]["measured_mean"] == 1


def test_run_all_measures_the_whole_pool_and_loses_nothing(evaluation):
    run_all = evaluation.strategies["RunAll"]
    assert run_all["measured_mean"] == 32
    assert run_all["loss_pct_max"] == 0 and run_all["frac_loss_le_3pct"] == 1
    assert run_all["gain_pct_mean"] == pytest.approx(0, abs=1e-9)
    assert run_all["overhead_pct_mean"] > 0


def test_hybrid_measures_less_than_run_all(evaluation):
    hybrid = evaluation.strategies["hybrid"]
    assert 1 <= hybrid["measured_mean"] < 32
    assert hybrid["gain_pct_mean"] > 0


def test_accuracy_per_left_out_ivp_with_models_trained_on_the_others(evaluation, fixture_rows):
    measured = fixture_rows.measured
    assert list(evaluation.accuracy) == list(IVPS)
    for ivp, accuracy in evaluation.accuracy.items():
        assert accuracy["rows"] == (measured["ivp"] == ivp).sum() == 64
        # trained on exactly the other IVPs' measured rows: none of the scored ones
        assert accuracy["training_rows"] == (measured["ivp"] != ivp).sum() == 192
        for name in ("offline", "trivial", "linear", "gp"):
            assert accuracy[name]["median_rel_error"] >= 0
            assert -1 <= accuracy[name]["kendall_tau"] <= 1
        # the trivial correction scales every time alike: it keeps the offline ranking
        assert accuracy["trivial"]["kendall_tau"] == pytest.approx(accuracy["offline"]["kendall_tau"])
        # with the IVP's other size measured only each configuration's level changes
        other = accuracy["gp_other_sizes"]
        assert other["kendall_tau"] == pytest.approx(accuracy["gp"]["kendall_tau"])
        assert other["median_rel_error"] != accuracy["gp"]["median_rel_error"]


def test_the_other_sizes_correction_takes_each_level_from_the_ivps_other_configuration(
        fixture_rows):
    frame = fixture_rows.frame
    train = Rows(frame[frame["ivp"] != "Cusp"], fixture_rows.feature_schema,
                 fixture_rows.machine_sha256)
    gp = fit(train, "gp")
    test = fixture_rows.measured[fixture_rows.measured["ivp"] == "Cusp"].reset_index(drop=True)
    correction = _with_other_sizes(gp, test)
    features = test["features"].tolist()
    own = levels_of(pool_targets(test), configuration_keys(test), features)
    for n, other in ((600, 6000), (6000, 600)):
        mine = np.flatnonzero(test["n"].to_numpy() == n)
        rows = [features[i] for i in mine]
        expected = Levels(gp.levels.points + tuple(p for p in own.points if p[3] == other))
        # Cusp's level at the other size, moved as the training IVPs' levels move between them
        assert expected.at(1, n, "Cusp") == pytest.approx(
            own.at(1, other, "Cusp") + np.median([gp.levels.at(1, n, i) - gp.levels.at(1, other, i)
                                                  for i in ("InverterChain", "Medakzo", "Wave1D")]))
        np.testing.assert_allclose(
            correction[mine], dataclasses.replace(gp, levels=expected).correction(
                test["variant"].iloc[mine].tolist(), rows)[0])


def test_per_configuration_numbers_and_curves(evaluation, fixture_rows):
    keys = [c["key"] for c in evaluation.configurations]
    assert sorted(keys) == sorted(list(p.key) for p in whole_pools(fixture_rows))
    for config in evaluation.configurations:
        assert config["pool"] == 32
        assert config["RunAll"]["loss"] == 0 and config["RunAll"]["measured"] == 32
        assert config["hybrid"]["first_within"] in (0.0, 1.0)
    assert set(evaluation.first_pick) == {"hybrid", "offline_top1", "random"}
    curves = evaluation.curves
    assert set(curves) == set(evaluation.strategies) | {"random expectation"}
    # S(x) / t_best never rises and ends at 1 for RunAll
    for name, curve in curves.items():
        assert np.all(np.diff(curve) <= 1e-12) and curve[-1] >= 1 - 1e-12, name
    assert curves["RunAll"][-1] == pytest.approx(1)
    assert len(evaluation.predictions) == 256
    assert all(math.isfinite(p["gp"]) and p["gp_std_log"] > 0 for p in evaluation.predictions)


def test_orders_from_other_configurations_of_every_configuration(evaluation):
    # on the fixture every IVP has both sizes whole: three other IVPs and an own other size each
    for config in evaluation.configurations:
        found = config["transfer"]
        assert sorted(found["level"]["others"]) == sorted(set(IVPS) - {config["key"][1]})
        for name in transfer.ORDERS:
            assert 1 <= found[name]["to_within"] <= config["pool"]
    summary = evaluation.transfer
    assert summary["configurations"] == summary[transfer.OWN_SIZE]["configurations"] == 8
    assert summary[transfer.MEAN]["to_within_3pct_mean"] == pytest.approx(np.mean(
        [c["transfer"][transfer.MEAN]["to_within"] for c in evaluation.configurations]))
    assert 0 <= summary["level_outside_other_ivps"] <= 1


def test_evaluate_refuses_a_store_of_one_ivp(fixture_rows):
    frame = fixture_rows.frame
    one = Rows(frame[frame["ivp"] == "Cusp"], fixture_rows.feature_schema,
               fixture_rows.machine_sha256)
    with pytest.raises(RequestError, match="cover 1 IVP\\(s\\); leaving one out needs at least two"):
        evaluate(one)


def test_an_ivp_whose_complement_is_too_small_is_noted_and_skipped(fixture_rows):
    frame = fixture_rows.frame
    # Cusp whole, of Wave1D ten variants at n=600 only: Cusp's models would see ten rows
    wave = frame[(frame["ivp"] == "Wave1D") & (frame["n"] == 600)].iloc[:10]
    frame = pd.concat([frame[frame["ivp"] == "Cusp"], wave])
    result = evaluate(Rows(frame, fixture_rows.feature_schema, fixture_rows.machine_sha256))
    assert list(result.accuracy) == ["Wave1D"]
    assert result.notes == ["Cusp: 10 training rows from the other IVPs; skipped (a model needs 20)"]
    assert [c["key"] for c in result.configurations] == [["radauIIA7", "Wave1D", 600, 1, 1]]
    assert result.configurations[0]["RunAll"]["measured"] == 10


def test_how_soon_hybrid_reaches_the_best_is_counted_per_configuration(evaluation):
    to_best = evaluation.hybrid_to_best
    counts = to_best["per_configuration"]
    assert len(counts) == len(evaluation.configurations) == 8
    for count, config in zip(counts, evaluation.configurations):
        if config["hybrid"]["loss"] == 0:      # it measured the best, so it got within 3% by then
            assert 1 <= count <= config["hybrid"]["measured"]
    reached = [c for c in counts if c is not None]
    assert to_best["reached"] == len(reached) and to_best["max"] == max(reached)
    assert to_best["mean"] == pytest.approx(sum(reached) / len(reached))


def test_under_noise_every_metric_is_a_mean_over_seeds_with_its_spread(fixture_rows):
    noisy = evaluate(fixture_rows, noise=noise.shipped(), seeds=3)
    assert noisy.noise == {"source": noise.shipped().source,
                           "spread_log": noise.SHIPPED_NOISE.spread,
                           "model": noise.SHIPPED_NOISE.as_dict(),
                           "seeds": 3}
    for name, summary in noisy.strategies.items():
        spread = summary["over_seeds"]
        for key in ("measured_mean", "loss_pct_mean", "score"):
            # a mean of per-configuration means over 3 seeds lies within their 10th-90th range
            low, high = spread[key]
            assert low - 1e-9 <= summary[key] <= high + 1e-9, (name, key)
        assert spread["frac_loss_le_3pct"][0] <= spread["frac_loss_le_3pct"][1]
    # RunAll measures everything, yet a noisy timing can cost it the best: judged by stored times
    run_all = noisy.strategies["RunAll"]
    assert run_all["measured_mean"] == 32 and run_all["retimed_mean"] >= 2
    assert len(noisy.hybrid_to_best["per_configuration"]) == 3 * 8
    # seeds change what is measured, not what the pools are
    assert [c["key"] for c in noisy.configurations] == [c["key"] for c in evaluate(fixture_rows).configurations]


def test_left_out_trains_on_the_other_ivps_and_scores_the_one(fixture_rows):
    train, test = left_out(fixture_rows, "Medakzo")
    assert "Medakzo" not in set(train.frame["ivp"]) and set(test["ivp"]) == {"Medakzo"}
    assert len(test) == (fixture_rows.measured["ivp"] == "Medakzo").sum()
    assert list(test.index) == list(range(len(test)))
    assert train.feature_schema == fixture_rows.feature_schema
