"""The timing protocol: repetitions until the median's interval is narrow or the budget is spent.

One rule for every timing, in a child process (measure/runner) and in this process (a step written
in Python, numpy or numba): warm up, time one step to size a repetition, then repeat until at least
min_repetitions are in and the 95% interval of their median is within ci_target, or lies wholly
above slower_than_s (a search's best held and a margin: a narrower interval would change no
choice), or budget_s is spent, or max_repetitions are in.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from hybridtune.measure.statistics import median_ci, relative_half_width


def interval_reached(samples: list[float], ci_target: float, slower_than_s: float = math.inf
                     ) -> bool:
    """The median's 95% interval is within ci_target of it, or lies wholly above slower_than_s
    (never with too few samples)."""
    median, low, high = median_ci(samples)
    return relative_half_width(median, low, high) <= ci_target or low > slower_than_s


def steps_per_repetition(one_step_s: float, repetition_s: float) -> int:
    """The steps that make one repetition take about repetition_s."""
    return max(1, int(math.ceil(repetition_s / max(one_step_s, 1e-9))))


def repeat(time_once: Callable[[], float], options, ceiling_s: float = math.inf) -> list[float]:
    """time_once() repeated under the stop rule of options (a MeasureOptions): its samples; cut
    short, with fewer than min_repetitions where need be, once ceiling_s seconds were spent."""
    samples: list[float] = []
    started = time.monotonic()
    while len(samples) < options.max_repetitions:
        samples.append(time_once())
        spent = time.monotonic() - started
        if spent > ceiling_s or len(samples) >= options.min_repetitions and (
                interval_reached(samples, options.ci_target, options.slower_than_s)
                or spent > options.budget_s):
            break
    return samples


def ceiling(options, round_s: float, least: int, count: int = 1) -> float:
    """The most seconds a timing of count variants takes, rounds (one repetition of each) planned
    at round_s: options.overrun times what their budgets or its least rounds need, the more."""
    return options.overrun * max(options.budget_s * count, least * round_s)


@dataclass(frozen=True)
class StepTiming:
    """Seconds per step timed in this process: the median, its interval and how it was reached."""
    median_s: float
    ci_low_s: float | None
    ci_high_s: float | None
    ci_rel: float | None
    repetitions: int
    steps_per_repetition: int

    def as_json(self) -> dict:
        return dict(self.__dict__)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def time_steps(run_steps: Callable[[int, bool], float], options) -> StepTiming:
    """The protocol in this process: run_steps(k, warm) runs k steps (from the initial state
    unless warm, reset outside the timed region) and returns seconds per step."""
    run_steps(options.warmup_steps, True)
    steps = steps_per_repetition(run_steps(1, False), options.repetition_s)
    samples = repeat(lambda: run_steps(steps, False), options)
    median, low, high = median_ci(samples)
    return StepTiming(median, _finite(low), _finite(high),
                      _finite(relative_half_width(median, low, high)), len(samples), steps)
