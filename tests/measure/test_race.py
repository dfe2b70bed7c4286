"""The race's rule: settled when every contender is told apart from the leader or close enough."""

import math

from hybridtune.measure import race


def test_a_race_is_settled_when_every_contender_is_told_apart_or_within_the_gap():
    apart = {"a": (1.0, 0.99, 1.01), "b": (1.05, 1.02, 1.08)}
    assert race.leader(apart) == "a" and race.settled(apart)
    overlapping = {"a": (1.0, 0.99, 1.03), "b": (1.05, 1.02, 1.08)}
    assert not race.settled(overlapping)
    close = {"a": (1.0, 0.95, 1.05), "b": (1.015, 0.96, 1.07)}
    assert race.settled(close)
    assert not race.settled(close, practical_gap=0.01)


def test_an_unbounded_interval_is_never_told_apart():
    few = {"a": (1.0, -math.inf, math.inf), "b": (1.5, -math.inf, math.inf)}
    assert not race.settled(few)
    assert race.tied(few, "a") == {"b": 0.5}


def test_ties_name_each_racer_not_told_apart_closest_first():
    timings = {"a": (1.0, 0.98, 1.02), "c": (1.019, 1.0, 1.04), "b": (1.01, 0.99, 1.03),
               "d": (1.1, 1.08, 1.12)}
    found = race.tied(timings, "a")
    assert list(found) == ["b", "c"]
    assert found["b"] == 1.01 / 1.0 - 1


def test_a_missing_bound_is_the_median_alone():
    assert race.tied({"a": (1.0, None, None), "b": (1.0, None, math.nan)}, "a") == {"b": 0.0}
    assert race.tied({"a": (1.0, None, None), "b": (1.1, None, None)}, "a") == {}
