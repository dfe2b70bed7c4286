"""The timing protocol's stop rule: the interval behind it, the repetitions it takes, the budget."""

from __future__ import annotations

import itertools

import pytest

from hybridtune.measure.repetitions import (interval_reached, repeat, steps_per_repetition,
                                            time_steps)
from hybridtune.measure.runner import MeasureOptions


def test_the_interval_is_reached_only_with_enough_samples_close_enough():
    assert not interval_reached([1.0] * 5, 0.02)          # 95% needs at least 6 order statistics
    assert interval_reached([1.0] * 6, 0.02)
    spread = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 0.98]
    assert not interval_reached(spread, 0.02)
    assert interval_reached(spread, 0.11)


def test_steps_per_repetition_fill_the_repetition_time():
    assert steps_per_repetition(0.001, 0.02) == 20
    assert steps_per_repetition(1.0, 0.02) == 1
    assert steps_per_repetition(0.0, 0.02) >= 1


def test_repeat_stops_once_the_interval_is_within_the_target():
    samples = repeat(lambda: 1.0, MeasureOptions(min_repetitions=6, max_repetitions=50))
    assert samples == [1.0] * 6


def test_repeat_stops_at_the_most_repetitions_when_the_interval_stays_wide():
    values = itertools.cycle([1.0, 2.0, 3.0])
    options = MeasureOptions(min_repetitions=6, max_repetitions=9, budget_s=1e9)
    assert len(repeat(lambda: next(values), options)) == 9


def test_repeat_stops_once_the_budget_is_spent_after_the_least_repetitions():
    values = itertools.cycle([1.0, 2.0, 3.0])
    options = MeasureOptions(min_repetitions=3, max_repetitions=100, budget_s=0.0)
    assert len(repeat(lambda: next(values), options)) == 3


def test_time_steps_warms_up_sizes_a_repetition_and_reports_the_median():
    calls = []

    def run_steps(k: int, warm: bool) -> float:
        calls.append((k, warm))
        return 0.004

    timing = time_steps(run_steps, MeasureOptions(warmup_steps=2, repetition_s=0.02))
    assert calls[:2] == [(2, True), (1, False)]
    assert set(calls[2:]) == {(5, False)}
    assert timing.median_s == pytest.approx(0.004)
    assert timing.steps_per_repetition == 5 and timing.repetitions == 6
    assert timing.ci_rel == 0.0


def test_time_steps_leaves_an_unbounded_interval_out():
    options = MeasureOptions(min_repetitions=3, max_repetitions=3, warmup_steps=0)
    timing = time_steps(lambda k, warm: 0.5, options)
    assert timing.ci_low_s is None and timing.ci_rel is None and timing.repetitions == 3
