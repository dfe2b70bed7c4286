"""Corrected times: a row measured here is conditioned on its measurement (weighted by the noise of a timing against the model's spread); an unmeasured row is the model's alone."""

from __future__ import annotations

import math

import numpy as np

from hybridtune.learn.correct import corrected_times, measured_here
from hybridtune.learn.timing import TIMING_SPREAD, Z95
from hybridtune.learn.train import fit


def test_a_measured_row_moves_by_the_weight_of_its_measurement_against_the_model():
    mean, std = np.array([0.2, 0.2, 0.2]), np.array([TIMING_SPREAD, 0.1, 0.1])
    target = np.array([0.0, np.nan, 0.0])
    own = np.array([np.nan, np.nan, 0.2 * Z95])   # the third's own noise is wider than a timing's
    moved, spread = measured_here(mean, std, target, own)
    # equal variances: halfway, the variance halved
    assert math.isclose(moved[0], 0.1) and math.isclose(spread[0], TIMING_SPREAD / math.sqrt(2))
    assert moved[1] == 0.2 and spread[1] == 0.1   # unmeasured: the model's
    assert math.isclose(moved[2], 0.2 - 0.2 * 0.01 / (0.01 + 0.04))
    assert math.isclose(spread[2], math.sqrt(0.01 * 0.04 / 0.05))


def test_corrected_times_of_measured_rows_hold_the_measurement_and_name_it(fixture_rows):
    fitted = fit(fixture_rows, "gp")
    frame = fixture_rows.frame
    mine = frame[(frame["ivp"] == "Cusp") & (frame["n"] == frame["n"].min())]
    model, model_std = fitted.correction(mine["variant"].tolist(), mine["features"].tolist())
    items = corrected_times(fitted, mine)
    measured = mine["median_s"].to_numpy(float)
    assert [item.measured_s for item in items] == list(measured)
    model_s = mine["predicted_s"].to_numpy(float) * np.exp(model)
    corrected = np.array([item.corrected_s for item in items])
    # each lies between the model's time and the measured one, nearer the measured one where the
    # model's spread is the wider
    low, high = np.minimum(model_s, measured), np.maximum(model_s, measured)
    assert np.all((corrected >= low * (1 - 1e-12)) & (corrected <= high * (1 + 1e-12)))
    wide = model_std > TIMING_SPREAD
    assert wide.any()
    nearer = np.abs(np.log(corrected / measured)) < np.abs(np.log(corrected / model_s))
    assert np.all(nearer[wide & (model_s != measured)])
    unmeasured = corrected_times(fitted, mine.assign(median_s=np.nan, ci_rel=np.nan))
    assert all(item.measured_s is None for item in unmeasured)
    np.testing.assert_allclose([item.corrected_s for item in unmeasured], model_s)
