"""The adaptive library's judgement: the kept variant against a re-timing (within 2% or tied), and the overhead its own report accounts for."""

import pytest

from hybridtune.pipeline.adaptive_check import accounted_overhead, against_retiming


def test_a_kept_variant_behind_in_every_round_is_not_tied():
    found = against_retiming({"a": [1.00, 1.01, 0.99], "b": [1.05, 1.06, 1.04]}, "b")
    assert found["retimed_best"] == "a" and not found["tied"] and not found["within"]
    assert found["behind"] == pytest.approx(0.05, abs=0.002)


def test_a_kept_variant_faster_in_one_round_is_tied_and_one_within_two_percent_passes():
    assert against_retiming({"a": [1.0, 1.0, 1.0], "b": [1.04, 0.99, 1.05]}, "b")["tied"]
    close = against_retiming({"a": [1.0, 1.0, 1.0], "b": [1.01, 1.015, 1.01]}, "b")
    assert close["within"] and not close["tied"]
    assert against_retiming({"a": [1.0, 1.0], "b": [1.1, 1.1]}, "a")["behind"] == 0.0


def test_the_accounted_overhead_is_the_dropped_candidates_excess():
    lines = [{"kept": True, "steps": 1900, "median_s": 0.01},
             {"kept": False, "steps": 10, "median_s": 0.012},
             {"kept": False, "steps": 10, "median_s": 0.011}]
    assert accounted_overhead(lines, 2000) == pytest.approx((10 * 0.002 + 10 * 0.001) / 20)
