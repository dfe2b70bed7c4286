"""The timing protocol's stop rule: the interval behind it, the repetitions it takes, the budget, the mark above which a timing ends."""

from __future__ import annotations

import itertools
import math
import time

import pytest

from hybridtune.measure.repetitions import (ceiling, interval_reached, repeat,
                                            steps_per_repetition, time_steps)
from hybridtune.measure.statistics import median_ci
from hybridtune.measure.runner import MeasureOptions


def test_the_interval_is_reached_only_with_enough_samples_close_enough():
    assert not interval_reached([1.0] * 5, 0.02)          # 95% needs at least 6 order statistics
    assert interval_reached([1.0] * 6, 0.02)
    spread = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 0.98]
    assert not interval_reached(spread, 0.02)
    assert interval_reached(spread, 0.11)


def test_repeat_stops_once_the_interval_lies_wholly_above_the_mark():
    wide = [2.0, 3.0, 2.2, 2.8, 2.4, 2.6]           # +-20%: far from a 2% interval
    options = MeasureOptions(min_repetitions=6, max_repetitions=60, budget_s=1e9)
    values = itertools.cycle(wide)
    assert len(repeat(lambda: next(values), options)) == 60
    above = MeasureOptions(min_repetitions=6, max_repetitions=60, budget_s=1e9, slower_than_s=1.9)
    values = itertools.cycle(wide)
    assert repeat(lambda: next(values), above) == wide     # its fastest above 1.9: no contender
    straddling = MeasureOptions(min_repetitions=6, max_repetitions=60, budget_s=1e9,
                                slower_than_s=2.5)
    values = itertools.cycle(wide)
    assert len(repeat(lambda: next(values), straddling)) == 60  # the median's own: timed on
    assert not interval_reached([5.0] * 5, 0.0, slower_than_s=1.0)   # never on too few


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


def test_repeat_is_cut_short_at_its_ceiling_below_the_least_repetitions():
    """Repetitions that take far longer than planned (a load that slows every step) end at the
    ceiling, too few for an interval: the timing is flagged, not stretched."""
    def slow() -> float:
        time.sleep(0.05)
        return 1.0
    options = MeasureOptions(min_repetitions=6, max_repetitions=100, budget_s=0.0)
    started = time.monotonic()
    samples = repeat(slow, options, ceiling_s=0.12)
    assert 1 <= len(samples) <= 3 < options.min_repetitions and time.monotonic() - started < 1.0
    assert median_ci(samples)[1:] == (-math.inf, math.inf)


def test_the_ceiling_is_overrun_times_the_budget_or_the_least_rounds():
    options = MeasureOptions(budget_s=0.2, overrun=5.0)
    assert ceiling(options, 0.02, 6) == pytest.approx(1.0)          # the budget needs more
    assert ceiling(options, 1.0, 6) == pytest.approx(30.0)          # a step of a second
    assert ceiling(options, 0.12, 10, count=6) == pytest.approx(6.0)   # interleaved rounds
