"""A live choice judged against strong variants: their set, the rounds' order, the reference."""

import math

import pytest

from hybridtune.strategies.strong_variants import (against_fastest, cover, judged, round_order,
                                                   strong_variants)


def test_the_cover_is_each_skeletons_first_variant():
    assert sorted(cover(["B_1", "A_1", "B_2", "C_1", "A_2"])) == ["A_1", "B_1", "C_1"]


def test_strong_variants_are_the_choice_and_each_sets_fastest_once():
    mine = {"a": 1.0, "b": 2.0, "c": 3.0}
    theirs = {"b": 1.5, "d": 1.0, "e": 9.0}
    assert strong_variants("c", mine, theirs, 2) == ["c", "a", "b", "d"]


def test_every_other_round_runs_in_reverse():
    assert round_order(["a", "b"], 0) == ["a", "b"] and round_order(["a", "b"], 1) == ["b", "a"]


def test_the_choice_is_judged_against_the_mean_of_the_three_fastest():
    loss, fastest, reference = against_fastest({"a": 1.0, "b": 2.0, "c": 3.0, "d": 6.0}, "d")
    assert fastest == ["a", "b", "c"] and reference == 2.0 and loss == 2.0
    assert math.isnan(against_fastest({"a": 1.0}, "z")[0])
    found = judged({"a": [1.0, 1.0, 9.0], "b": [2.0, 2.0, 2.0], "c": [], "d": [1.0, 4.0, 2.0]},
                   "d", 0.05)
    assert found["three_fastest"] == ["a", "b", "d"]
    assert found["chosen_vs_reference"] == pytest.approx(2.0 / (5.0 / 3.0) - 1)
    assert found["chosen_vs_reference_geometric_means"] == pytest.approx(
        2.0 / ((9 ** (1 / 3) + 2.0 + 2.0) / 3) - 1)
    assert not found["within_target"]


def test_a_choice_passes_within_the_target_or_where_the_fastest_is_named_as_tied():
    from hybridtune.strategies.strong_variants import tie_or_within
    rounds = {"a": [1.03, 1.04, 1.03], "b": [1.0, 1.01, 0.99], "c": [1.5], "d": []}
    found = tie_or_within(rounds, "a", [], 0.02)
    assert found["fastest"] == "b" and found["behind"] == pytest.approx(0.03)
    assert not found["passes"]
    assert tie_or_within(rounds, "a", ["b"], 0.02)["passes"]
    assert tie_or_within(rounds, "a", [], 0.05)["passes"]
