"""Hybrid's trained scale and stop chosen on one ground truth and scored on the other, both ways.

Each store's models are fitted with one IVP left out; hybrid is replayed on the left-out IVP's
whole pools under the store's own noise for every scale and stop of the grid. A store chooses, at
the default stop, the scale that measures least among those whose Brier skill is within one
standard error of the best (by a bootstrap over configurations: the one-standard-error rule), then
the largest stop whose mean loss stays within CEILING_SLACK of the ceiling (RunAll with raced
contenders) and whose 90th percentile within P90_BOUND; its choice is then scored on the other
store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from hybridtune.describe.strategy import HYBRID_STOP, Strategy
from hybridtune.learn.prior import TRAINED_SCALE
from hybridtune.learn.table import Rows
from hybridtune.learn.train import MIN_ROWS, fit
from hybridtune.strategies import calibration, in_parallel, metrics, replay
from hybridtune.strategies.leave_one_out import CEILING_ROUNDS, left_out, replay_setting
from hybridtune.strategies.noise import Noise

SCALES = (0.4, 0.6, 0.8, 1.0)
STOPS = (0.05, 0.1, 0.25, 0.5)
CEILING_SLACK = 0.5      # points of mean loss a stop may give away against the ceiling
P90_BOUND = 3.0          # the 90th percentile of loss (%) a stop must keep
RESAMPLES = 1000         # bootstrap resamples of the configurations behind a skill's standard error


@dataclass(frozen=True)
class Scores:
    """Hybrid at one scale and stop on one store: its stop chances' Brier skill, its loss (%)
    over every configuration and noise seed, and what it measured per configuration.
    by_configuration: per configuration (in a fixed order) its decisions, their squared error
    and how many of them saw the event, what a bootstrap of the skill resamples."""
    scale: float
    stop: float
    brier_skill: float
    loss_pct_mean: float
    loss_pct_p90: float
    measured_mean: float
    decisions: int
    by_configuration: tuple = ()


@dataclass(frozen=True)
class Fold:
    """One left-out IVP: its model and, per method, its whole pools and hybrid's prior there."""
    fitted: object
    groups: tuple            # (pools, (belief, note)) per method


def folds(rows: Rows, noise: Noise | None, seeds: int):
    """The replay setting (pools and their noise draws) and every left-out IVP's fold."""
    ivps = sorted(set(rows.measured["ivp"]))
    setting = replay_setting(rows, noise, seeds, HYBRID_STOP, 2000, ivps)
    found = in_parallel.mapped(_fold, setting, ivps)
    return setting, [fold for fold in found if fold is not None]


def _fold(setting, ivp: str) -> Fold | None:
    """ivp's fold: its model trained on the other IVPs, hybrid's priors on its whole pools (None
    where it has none or the others too few rows)."""
    train, _ = left_out(setting.rows, ivp)
    mine = sorted((p for p in setting.pools if p.key[1] == ivp), key=lambda p: p.key)
    if len(train.measured) < MIN_ROWS or not mine:
        return None
    fitted = fit(train, "gp", setting.max_rows, left_out=ivp)
    groups = []
    for method in dict.fromkeys(p.key[0] for p in mine):
        group = [p for p in mine if p.key[0] == method]
        groups.append((group, replay.hybrid_prior(group, fitted)))
    return Fold(fitted, tuple(groups))


def scored(setting, found: list, scale: float, stop: float) -> Scores:
    """Hybrid replayed on every fold with the trained covariance scaled by `scale` (in place of
    TRAINED_SCALE) and stopping below `stop`, under each noise seed."""
    pairs, losses, measured, by_configuration = [], [], [], []
    for fold in found:
        for group, (belief, note) in fold.groups:
            prior = (belief.widened(scale / TRAINED_SCALE), note)
            mine: dict = {pool.key: [] for pool in group}
            for seed in range(setting.seeds):
                drawn = [setting.errors[p.key][seed] for p in group]
                for pool, result in zip(group, replay.hybrid_together(
                        group, fold.fitted, stop, errors=drawn, prior=prior)):
                    mine[pool.key] += calibration.outcomes(pool.times, result.order,
                                                           result.decisions)
                    losses.append(metrics.pool_loss(pool.times, result.chosen))
                    measured.append(len(result.order))
            for decided in mine.values():
                pairs += decided
                chance, happened = np.array(decided, float).reshape(-1, 2).T
                by_configuration.append((len(decided), float(np.sum((chance - happened) ** 2)),
                                         float(happened.sum())))
    skill = calibration.reliability(pairs).get("brier_skill", float("nan"))
    return Scores(scale, stop, float(skill), float(100 * np.mean(losses)),
                  float(100 * np.percentile(losses, 90)), float(np.mean(measured)), len(pairs),
                  tuple(by_configuration))


def _scored_at(shared: tuple, point: tuple) -> Scores:
    return scored(*shared, *point)


def ceiling_loss(setting, found: list) -> float:
    """The mean loss (%) of RunAll with its contenders raced in CEILING_ROUNDS rounds over the
    folds' pools and noise seeds."""
    losses = [metrics.pool_loss(pool.times, r.chosen)
              for fold in found for group, _ in fold.groups for pool in group
              for r in (replay.run(pool, Strategy("run_all"), setting.errors[pool.key][seed],
                                   CEILING_ROUNDS) for seed in range(setting.seeds))]
    return float(100 * np.mean(losses))


def chosen(grid: list[Scores], ceiling: float) -> tuple[float, float]:
    """(scale, stop) a store chooses: at the default stop the scale that measures least among
    those within one standard error of the best skill (least_measured_near_best), then at that
    scale the largest stop within CEILING_SLACK of the ceiling and P90_BOUND, else the stop of
    least mean loss."""
    scale = least_measured_near_best([s for s in grid if s.stop == HYBRID_STOP]).scale
    mine = [s for s in grid if s.scale == scale]
    good = [s for s in mine if s.loss_pct_mean <= ceiling + CEILING_SLACK
            and s.loss_pct_p90 <= P90_BOUND]
    stop = max(good, key=lambda s: s.stop).stop if good else \
        min(mine, key=lambda s: s.loss_pct_mean).stop
    return scale, stop


def least_measured_near_best(points: list[Scores]) -> Scores:
    """Of these points (one stop, several scales), the one that measures least among those whose
    skill falls short of the best by no more than the standard error of the difference, from
    RESAMPLES bootstrap resamples of the configurations (paired: the same resample for each
    point). Where the points carry no configurations, the best skill."""
    best = max(points, key=lambda s: s.brier_skill)
    sizes = {len(s.by_configuration) for s in points}
    if len(sizes) != 1 or 0 in sizes:
        return best
    picks = np.random.default_rng(0).integers(0, len(best.by_configuration),
                                              (RESAMPLES, len(best.by_configuration)))
    near = [s for s in points
            if best.brier_skill - s.brier_skill
            <= np.nanstd(_resampled_skill(best, picks) - _resampled_skill(s, picks))]
    return min(near, key=lambda s: (s.measured_mean, s.scale))


def _resampled_skill(point: Scores, picks: np.ndarray) -> np.ndarray:
    """The Brier skill of each resample (rows of configuration indices) of the point's decisions."""
    count, squared, events = np.asarray(point.by_configuration, float)[picks].sum(axis=1).T
    frequency = events / np.maximum(count, 1)
    constant = frequency * (1 - frequency)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(constant > 0, 1 - squared / count / constant, np.nan)


def store_grid(rows: Rows, noise: Noise | None, seeds: int, scales=SCALES,
               stops=STOPS) -> dict:
    """One store's grid of Scores, its ceiling and its own choice."""
    with threadpool_limits(1, user_api="blas"):
        setting, found = folds(rows, noise, seeds)
        grid = in_parallel.mapped(_scored_at, (setting, found),
                                  [(scale, stop) for scale in scales for stop in stops])
        ceiling = ceiling_loss(setting, found)
    return {"grid": grid, "ceiling_loss_pct": ceiling, "chosen": chosen(grid, ceiling),
            "folds": len(found), "seeds": setting.seeds}


def out_of_sample(grids: dict) -> dict:
    """Per direction "A -> B": the (scale, stop) chosen on A, scored on B, beside B's own choice
    scored on B (in sample) and the shipped constants scored on B."""
    def at(grid, point):
        return next(asdict(s) for s in grid["grid"] if (s.scale, s.stop) == tuple(point))

    out = {}
    for a, b in ((a, b) for a in grids for b in grids if a != b):
        out[f"{a} -> {b}"] = {"chosen_on": a, "scored_on": b,
                              "chosen": list(grids[a]["chosen"]),
                              "out_of_sample": at(grids[b], grids[a]["chosen"]),
                              "in_sample": at(grids[b], grids[b]["chosen"]),
                              "shipped": at(grids[b], (TRAINED_SCALE, HYBRID_STOP)),
                              "ceiling_loss_pct": grids[b]["ceiling_loss_pct"]}
    return out
