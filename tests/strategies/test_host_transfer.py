"""Leaving one host and one IVP out: both directions replayed, each with the spread the other direction measured, the prior naming the hardware it came from; the feature-set comparisons score each candidate.

A second host's ground truth cannot be measured on this one machine: host B is the fixture's rows
with times changed as other hardware would change them (a faster clock for compute-bound variants,
a narrower cache for the larger size), and another hardware id; the test says so where it builds it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridtune.learn.prior import from_other_hardware
from hybridtune.learn.table import Rows
from hybridtune.learn.train import fit
from hybridtune.strategies import host_transfer
from hybridtune.strategies.host_transfer import Host
from host_support import other_hardware

pytestmark = pytest.mark.slow
IVPS = ("Cusp", "InverterChain", "Wave1D")      # three IVPs x 32 variants x 2 sizes


def three(rows: Rows) -> Rows:
    return Rows(rows.frame[rows.frame["ivp"].isin(IVPS)].reset_index(drop=True),
                rows.feature_schema, rows.machine_sha256)


def test_both_directions_use_the_spread_measured_the_other_way(fixture_rows):
    a = Host("Host A", three(fixture_rows))
    b = Host("Host B", other_hardware(three(fixture_rows)))

    found = host_transfer.host_transfer(a, b, None, None, seeds=1, max_rows=200)

    assert found["ivps"] == list(IVPS)
    spread = found["measured_spread"]
    assert set(spread) == {"Host A", "Host B"} and all(v >= 0 for v in spread.values())
    forth, back = found["directions"]
    assert (forth["from"], forth["to"]) == ("Host A", "Host B")
    assert forth["spread_used"] == spread["Host B"] and back["spread_used"] == spread["Host A"]
    for direction in (forth, back):
        assert set(direction["ivps"]) == set(IVPS)
        summary = direction["to_within"]
        assert 1 <= summary["own"] <= 32 and 1 <= summary["transferred"] <= 32
        assert math.isclose(summary["ratio"], summary["transferred"] / summary["own"])
        assert f"other hardware ({direction['from']}" in direction["prior_note"]
        for entry in direction["ivps"].values():
            assert entry["pools"] == 2
            assert -1 <= entry["accuracy"]["transferred"]["kendall_tau"] <= 1


def test_a_model_on_other_hardware_states_a_wider_variant_error(fixture_rows):
    train = Rows(fixture_rows.frame[fixture_rows.frame["ivp"] != "Wave1D"],
                 fixture_rows.feature_schema, fixture_rows.machine_sha256)
    fitted = fit(train, "gp", 200, left_out="Wave1D")
    moved = from_other_hardware(fitted, "Some CPU", 0.2)
    test = fixture_rows.measured[fixture_rows.measured["ivp"] == "Wave1D"]
    _, std = fitted.correction(test["variant"].tolist(), test["features"].tolist())
    _, wider = moved.correction(test["variant"].tolist(), test["features"].tolist())
    assert np.all(wider > std)
    assert math.isclose(moved.variant_spread, math.hypot(fitted.variant_spread, 0.2))
    assert moved.error_covariance[1] == pytest.approx(fitted.error_covariance[1] + 0.04)


def test_feature_sets_are_scored_leaving_an_ivp_and_a_host_out(fixture_rows):
    rows = three(fixture_rows)
    by_ivp = host_transfer.feature_set_comparison(rows, ((), ("ivp",)), max_rows=200)
    assert set(by_ivp) == {"none", "ivp"}
    for summary in by_ivp.values():
        assert set(summary["per"]) == set(IVPS)
        assert summary["kendall_tau_min"] <= summary["kendall_tau_mean"] <= 1
    a, b = Host("Host A", rows), Host("Host B", other_hardware(rows))
    by_host = host_transfer.host_feature_comparison(a, b, ((), ("machine",)), max_rows=200)
    assert set(by_host) == {"none", "machine"}
    assert len(by_host["none"]["per"]) == 2 * len(IVPS)
