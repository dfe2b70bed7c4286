"""A tune request's options checked: strategy, shard, time limit, the hybrid strategy's options."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hybridtune.describe.strategy import parse_strategy
from hybridtune.errors import RequestError
from hybridtune.runtime.launch import slurm_time_left
from hybridtune.strategies.tpe import optuna_module


@dataclass(frozen=True)
class TimeLimit:
    """The run's wall-time cap in seconds (None: no cap) and how it was chosen, in words."""
    seconds: float | None
    note: str


def chosen_strategy(text: str | None, scenario):
    """--strategy parsed, or the scenario's strategy."""
    if text is None:
        return scenario.strategy
    try:
        return parse_strategy(text)
    except ValueError as error:
        raise RequestError(f"--strategy {text}: expected {error}") from None


def parse_shard(text: str | None) -> tuple[int, int]:
    """--shard I/N as (I, N); (0, 1) without it."""
    if text is None:
        return 0, 1
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 0 <= int(index) < int(count)):
        raise RequestError(f"--shard {text}: expected I/N with 0 <= I < N, such as 0/4")
    return int(index), int(count)


def time_limit(seconds: float | None) -> TimeLimit:
    """--time-limit, else under Slurm the job's remaining time less a margin, else none."""
    if seconds is not None:
        if not (math.isfinite(seconds) and seconds > 0):
            raise RequestError(f"--time-limit {seconds:g}: expected seconds > 0")
        return TimeLimit(seconds, f"time limit {seconds:g} s")
    left = slurm_time_left()
    if left is None:
        return TimeLimit(None, "no time limit")
    margin = min(300.0, max(30.0, 0.1 * left))
    return TimeLimit(max(1.0, left - margin), f"time limit {left - margin:.0f} s (the job's "
                     f"remaining {left:.0f} s less {margin:.0f} s)")


def check_strategy_options(strategy, scenario, max_measurements: int | None,
                           prior: tuple | None) -> None:
    """--max-measurements and --prior only where the strategy has them; TPE's Optuna present;
    each prior store holding a model (any machine file) or whole pools."""
    if max_measurements is not None and max_measurements < 1:
        raise RequestError(f"--max-measurements {max_measurements}: expected a count >= 1")
    if max_measurements is not None and strategy.name != "hybrid":
        raise RequestError(f"--max-measurements {max_measurements}: only the hybrid "
                           f"strategy stops by itself (this run's is {strategy.spelling})")
    if strategy.name == "tpe":
        optuna_module()
    for path in prior or ():
        from hybridtune.pipeline.prior_stores import check_prior_store   # sklearn: 1 s to import
        if strategy.name != "hybrid":
            raise RequestError(f"--prior {path}: only the hybrid strategy has a belief "
                               f"(this run's is {strategy.spelling})")
        check_prior_store(path, scenario.machine.sha256)
