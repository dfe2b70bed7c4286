"""Fitting: the stratified subsample keeps every stratum within the limit, too few measurements are refused, size regimes by working set, the error covariance recovers how errors are shared, pool targets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hybridtune.errors import RequestError
from hybridtune.learn.table import Rows
from hybridtune.learn.encode import regime
from hybridtune.learn.table import POOL_MEDIAN
from hybridtune.learn.train import (MIN_ROWS, configuration_pairs, decorrelation, error_covariance, fit, pool_offsets, pool_targets,
                                    stratified_sample)


def _frame(sizes: dict) -> pd.DataFrame:
    """Rows per stratum (ivp, regime, threads), in an interleaved order."""
    ratios = {"L1": {"ws_over_L1": 0.5, "ws_over_L2": 0.1, "ws_over_L3": 0.01},
              "L2": {"ws_over_L1": 4.0, "ws_over_L2": 0.5, "ws_over_L3": 0.05},
              "L3": {"ws_over_L1": 40.0, "ws_over_L2": 5.0, "ws_over_L3": 0.5},
              "MEM": {"ws_over_L1": 400.0, "ws_over_L2": 50.0, "ws_over_L3": 5.0}}
    records = [{"ivp": ivp, "threads": threads, "features": dict(ratios[level]), "index": index}
               for (ivp, level, threads), count in sizes.items() for index in range(count)]
    generator = np.random.default_rng(1)
    return pd.DataFrame([records[i] for i in generator.permutation(len(records))])


def _strata(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(list(zip(frame["ivp"], frame["features"].map(regime), frame["threads"])))


SIZES = {("Cusp", "L1", 1): 50, ("Cusp", "MEM", 4): 30, ("Wave1D", "L2", 1): 15,
         ("Wave1D", "L2", 8): 3, ("Medakzo", "L3", 1): 1, ("Medakzo", "L3", 2): 1}


@pytest.mark.parametrize("limit", [6, 7, 20, 33, 99])
def test_stratified_sample_keeps_every_stratum_within_the_limit(limit):
    frame = _frame(SIZES)
    sample = stratified_sample(frame, limit)
    counts = _strata(sample).value_counts()
    assert len(sample) == limit
    assert set(counts.index) == set(SIZES)
    assert all(counts[stratum] <= size for stratum, size in SIZES.items())
    assert not sample.index.duplicated().any()
    if limit >= 20:     # then the largest stratum keeps about its share
        assert abs(counts[("Cusp", "L1", 1)] - limit * 50 / 100) <= 1


def test_stratified_sample_is_reproducible_and_keeps_small_frames_whole():
    frame = _frame(SIZES)
    assert stratified_sample(frame, 20, seed=3).index.tolist() == \
        stratified_sample(frame, 20, seed=3).index.tolist()
    assert stratified_sample(frame, 20, seed=3).index.tolist() != \
        stratified_sample(frame, 20, seed=4).index.tolist()
    assert stratified_sample(frame, 100) is frame


def test_stratified_sample_with_more_strata_than_the_limit_keeps_the_largest_within_it():
    frame = _frame(SIZES)
    sample = stratified_sample(frame, 3)
    assert len(sample) == 3
    assert set(_strata(sample)) == {("Cusp", "L1", 1), ("Cusp", "MEM", 4), ("Wave1D", "L2", 1)}


@pytest.mark.parametrize("ratios, expected", [
    ({"ws_over_L1": 0.2, "ws_over_L2": 0.01, "ws_over_L3": 0.001}, "L1"),
    ({"ws_over_L1": 1.0, "ws_over_L2": 0.1, "ws_over_L3": 0.01}, "L1"),
    ({"ws_over_L1": 1.01, "ws_over_L2": 1.0, "ws_over_L3": 0.1}, "L2"),
    ({"ws_over_L1": 30.0, "ws_over_L2": 1.5, "ws_over_L3": 0.9}, "L3"),
    ({"ws_over_L1": 300.0, "ws_over_L2": 15.0, "ws_over_L3": 1.01}, "MEM"),
    ({"ws_over_L2": 0.5}, "L2"),
    ({}, "MEM"),
])
def test_regime_is_the_first_cache_the_working_set_fits(ratios, expected):
    assert regime(ratios) == expected


def _with_measured(rows: Rows, count: int) -> Rows:
    """The rows with all but the first count measurements removed."""
    frame = rows.frame.copy()
    measured = np.flatnonzero(frame["median_s"].notna())
    frame.loc[frame.index[measured[count:]], "median_s"] = np.nan
    return Rows(frame, rows.feature_schema, rows.machine_sha256)


def test_fit_refuses_fewer_measured_rows_than_the_minimum(fixture_rows):
    with pytest.raises(RequestError, match=f"19 measured variants .* at least {MIN_ROWS}"):
        fit(_with_measured(fixture_rows, MIN_ROWS - 1), "linear")
    fitted = fit(_with_measured(fixture_rows, MIN_ROWS), "linear")
    assert len(fitted.row_ids) == fitted.available_rows == MIN_ROWS


def test_fit_refuses_an_unknown_kind(fixture_rows):
    with pytest.raises(RequestError, match="'forest': expected one of linear, gp"):
        fit(fixture_rows, "forest")


@pytest.mark.parametrize("kind", ["linear", "gp"])
def test_fit_on_a_subsample_states_what_it_used(fixture_rows, kind):
    fitted = fit(fixture_rows, kind, max_rows=40)
    measured = fixture_rows.measured.set_index("row_id")
    assert len(fitted.row_ids) == 40 and len(set(fitted.row_ids)) == 40
    assert fitted.available_rows == len(measured) == 256
    assert set(measured.loc[list(fitted.row_ids), "ivp"]) == {"Cusp", "InverterChain", "Medakzo",
                                                              "Wave1D"}
    assert fitted.provenance[0] == tuple(measured.loc[fitted.row_ids[0],
                                                      ["code_sha256", "build_id", "hardware_id"]])
    assert fitted.feature_schema == fixture_rows.feature_schema
    assert fitted.score["r2_in_sample"] > 0.5


def test_error_covariance_recovers_the_shared_and_the_own_part_of_sampled_errors():
    generator = np.random.default_rng(3)
    samples = []
    for _ in range(300):
        points = generator.normal(size=(12, 2))
        distance = np.linalg.norm(points[:, None] - points[None], axis=-1)
        correlation = np.exp(-distance)
        covariance = 0.09 * correlation + 0.01 * np.eye(12)
        samples.append((generator.multivariate_normal(np.full(12, 0.4), covariance), correlation))
    shared, own = error_covariance(samples)
    assert abs(shared - 0.09) < 0.015 and abs(own - 0.01) < 0.004, (shared, own)
    independent = [(generator.normal(0, 0.2, size=12), c) for _, c in samples]
    shared, own = error_covariance(independent)
    assert shared < 0.005 and abs(own - 0.04) < 0.006, (shared, own)
    assert error_covariance([]) == (0.0, 0.0)


def test_configuration_pairs_correlate_the_same_variants_errors_between_configurations():
    generator = np.random.default_rng(5)
    common = generator.normal(0, 0.2, size=40)
    error = np.concatenate([common + 1.0, common * 0.5 - 2.0, generator.normal(size=40)])
    keys = np.array(["a"] * 40 + ["b"] * 40 + ["c"] * 40)
    variants = [f"v{i}" for i in range(40)] * 3
    features = [{"n": 600, "threads": 1}] * 40 + [{"n": 6000, "threads": 1}] * 40 \
        + [{"n": 600, "threads": 2}] * 40
    pairs = {(round(d_n, 6), round(d_t, 6)): (r, count)
             for d_n, d_t, r, count in configuration_pairs(error, keys, variants, features)}
    # a and b: the same errors scaled and shifted; a and c: unrelated
    assert pairs[(round(np.log(10), 6), 0.0)] == (pytest.approx(1.0), 40)
    assert abs(pairs[(0.0, round(np.log(2), 6))][0]) < 0.4
    assert len(pairs) == 3
    # too few variants in common: no pair
    assert configuration_pairs(error[:10], keys[:10], variants[:10], features[:10]) == []


def test_decorrelation_recovers_the_rates_and_leaves_an_unspanned_distance_independent():
    pairs = [(d_n, d_t, float(np.exp(-0.3 * d_n - 1.2 * d_t)), 50)
             for d_n in (0.0, 2.3, 4.6) for d_t in (0.0, 0.69) if d_n or d_t]
    np.testing.assert_allclose(decorrelation(pairs), (0.3, 1.2), rtol=1e-6)
    rate_n, rate_threads = decorrelation([(2.3, 0.0, 0.5, 40), (4.6, 0.0, 0.25, 40)])
    assert rate_n == pytest.approx(np.log(2) / 2.3) and rate_threads == np.inf
    assert decorrelation([]) == ()


def test_pool_targets_are_log_measured_over_the_pools_median_prediction():
    features = [{"predicted_s": 2.0, POOL_MEDIAN: 4.0}, {"predicted_s": 8.0, POOL_MEDIAN: 4.0},
                {"predicted_s": 3.0}]
    np.testing.assert_allclose(pool_offsets(features), [np.log(0.5), np.log(2.0), 0.0])
    frame = pd.DataFrame({"median_s": [1.0, 4.0, 6.0], "predicted_s": [2.0, 8.0, 3.0],
                          "features": features})
    np.testing.assert_allclose(pool_targets(frame), [np.log(0.25), 0.0, np.log(2.0)])


def test_the_spread_holds_the_new_ivp_errors_only_off_the_configurations_trained_on(fixture_rows):
    fitted = fit(fixture_rows, "gp")
    assert fitted.offset_spread > 0
    rows = fixture_rows.measured[fixture_rows.measured["ivp"] == "Cusp"]
    variants, features = rows["variant"].tolist(), rows["features"].tolist()
    X = fitted.encoding.matrix(variants, features)
    _, own = fitted.estimator.predict(X, return_std=True)
    _, spread = fitted.correction(variants, features)
    np.testing.assert_allclose(spread, own)           # Cusp at 600 and 6000 was trained on
    elsewhere = [{**f, "n": 4 * f["n"]} for f in features]
    _, own = fitted.estimator.predict(fitted.encoding.matrix(variants, elsewhere), return_std=True)
    _, spread = fitted.correction(variants, elsewhere)
    np.testing.assert_allclose(spread, np.sqrt(own ** 2 + fitted.offset_spread ** 2
                                               + fitted.variant_spread ** 2))
