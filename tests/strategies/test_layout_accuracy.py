"""The correction per layout with each IVP left out: scored on the left-out IVP, trained without it."""

import numpy as np
import pytest

from hybridtune.strategies.layout_accuracy import layout_corrections

IVPS = ["Cusp", "InverterChain", "Medakzo", "Wave1D"]


def test_each_ivp_is_left_out_and_scored_per_layout(fixture_rows):
    told = []
    found = layout_corrections(fixture_rows, lambda ivp, errors: told.append((ivp, errors)))
    assert [ivp for ivp, _ in told] == IVPS
    errors = found["median_rel_error"]
    assert list(errors) == ["1x1"] and list(errors["1x1"]) == IVPS
    measured = fixture_rows.measured
    for ivp, by_predictor in errors["1x1"].items():
        rows = measured[measured["ivp"] == ivp]
        offline = np.median(np.abs(rows["predicted_s"] / rows["median_s"] - 1))
        assert by_predictor["offline"] == pytest.approx(offline)
        # one rank only in the fixture: both trainings see the same rows
        assert by_predictor["all_layouts"] == by_predictor["one_rank_only"]
        assert by_predictor["all_layouts"] < by_predictor["offline"]
