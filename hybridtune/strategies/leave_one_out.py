"""Strategy replay and model accuracy on ground truth, out of sample: one IVP left out at a time.

For each IVP, models trained on the other IVPs, scored on this one's configurations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import kendalltau
from threadpoolctl import threadpool_limits

from hybridtune.describe.strategy import HYBRID_STOP, Strategy
from hybridtune.errors import RequestError
from hybridtune.strategies import calibration, in_parallel, metrics, replay, transfer
from hybridtune.learn.encode import regime
from hybridtune.learn.table import CONFIG, Rows
from hybridtune.strategies.judged_numbers import (CURVE, FIRST_WITHIN, LOSS_WITHIN, mean_curve,
                                                  pool_numbers, strategy_summary, to_best)
from hybridtune.strategies.noise import Noise, pool_draws
from hybridtune.strategies.tpe import optuna_module
from hybridtune.learn.level import Levels, levels_of
from hybridtune.learn.kernel_effects import effects_of
from hybridtune.learn.offline_errors import calibrated
from hybridtune.learn.train import MIN_ROWS, configuration_keys, fit, pool_targets

WHOLE_POOL = 0.95        # a configuration with ok measurements of this share of its pool
RANDOM_SEEDS = 20
TPE_SEEDS = 5
CAPPED = 12              # hybrid is replayed with this cap too (about preselect:5's mean count)
OTHER_SIZES = "gp_other_sizes"  # the left-out IVP's other configurations measured
NO_MODEL = "hybrid (no model)"  # hybrid on the kernel effects measured on the other IVPs' pools
OFFLINE_ERRORS = "hybrid (offline errors)"  # and on the offline model, its errors calibrated there
CEILING_ROUNDS = 3      # the ceiling: RunAll with its contenders raced in this many rounds
CEILING = f"RunAll+{CEILING_ROUNDS} rounds"


@dataclass(frozen=True)
class Evaluation:
    strategies: dict                 # name -> summary metrics
    accuracy: dict                   # left-out IVP -> offline/corrected/trivial errors and tau
    configurations: list             # per whole-pool configuration: per strategy its numbers
    first_pick: dict                 # share of configurations whose first pick is within 5%
    hybrid_to_best: dict = field(default_factory=dict)  # measurements until within 3% of the best
    curves: dict = field(default_factory=dict)       # strategy -> mean S(x) / t_best, x = 1..
    predictions: list = field(default_factory=list)  # per measured row: offline and corrected
    notes: list = field(default_factory=list)
    transfer: dict = field(default_factory=dict)     # what other configurations' times tell
    noise: dict = field(default_factory=dict)        # the noise replayed: source, spread, seeds
    reliability: dict = field(default_factory=dict)  # hybrid's stop chances against the outcomes
    offline_errors: dict = field(default_factory=dict)  # the no-model prior's calibration


def whole_pools(rows: Rows) -> list[replay.StoredPool]:
    """The configurations whose pool was measured whole (WHOLE_POOL of it ok)."""
    pools = []
    frame = rows.frame
    for key, group in frame.groupby(list(CONFIG), sort=True):
        measured = group[group["median_s"].notna()]
        if len(measured) >= WHOLE_POOL * len(group) and len(measured) >= 2:
            pools.append(replay.StoredPool(tuple(key), measured.reset_index(drop=True).assign(
                ci_rel=measured["ci_rel"].fillna(0.0).to_numpy())))
    return pools


def _with_other_sizes(gp, test: pd.DataFrame) -> np.ndarray:
    """The Gaussian process's correction of each configuration of the left-out IVP with the
    levels of its other configurations known, as after measuring them: what it is for a size
    (or thread count) never measured of an IVP that was."""
    features = test["features"].tolist()
    keys = configuration_keys(test)
    own = levels_of(pool_targets(test), keys, features).points
    out = np.empty(len(test))
    for key in sorted(set(keys)):
        mine = np.flatnonzero(keys == key)
        first = features[mine[0]]
        here = (float(first.get("ranks", 1) or 1), float(first.get("threads", 1) or 1),
                float(first["n"]))
        levels = Levels(gp.levels.points + tuple(p for p in own if tuple(p[1:4]) != here))
        out[mine] = replace(gp, levels=levels).correction(
            test["variant"].iloc[mine].tolist(), [features[i] for i in mine])[0]
    return out


def _best_variant(train: pd.DataFrame) -> str:
    """The variant with the least mean of t / t_best over the (whole-pool) training configurations."""
    best = train.groupby(list(CONFIG))["median_s"].transform("min")
    ratios = (train["median_s"] / best).groupby(train["variant"]).mean()
    counts = train.groupby("variant").size()
    common = counts[counts == counts.max()].index
    return str(ratios.loc[common].idxmin())


def accuracy_of(test: pd.DataFrame, corrected: dict) -> dict:
    """Median relative error and mean Kendall tau over configurations, per predictor."""
    measured = test["median_s"].to_numpy(float)
    out = {}
    for name, predicted in corrected.items():
        error = np.abs(predicted - measured) / measured
        taus = []
        for _, index in test.groupby(list(CONFIG)).indices.items():
            if len(index) > 2:
                tau = kendalltau(predicted[index], measured[index]).statistic
                taus.append(0.0 if math.isnan(tau) else tau)
        out[name] = {"median_rel_error": float(np.median(error)),
                     "kendall_tau": float(np.mean(taus)) if taus else math.nan}
    return out


def _replays(pool: replay.StoredPool, hybrid_replays: dict, best_variant: str, errors: list) -> dict:
    """The strategies replayed on one pool whatever hybrid measured, once per noise seed (errors:
    the pool's draws of each; hybrid_replays: hybrid's by name); the equal-cost ones follow."""
    return {"BestVariant": [replay.fixed_variant(pool, best_variant) for _ in errors],
            CEILING: [replay.run(pool, Strategy("run_all"), e, CEILING_ROUNDS) for e in errors],
            "RunAll": [replay.run(pool, Strategy("run_all"), e) for e in errors],
            "preselect:5": [replay.run(pool, Strategy("preselect", 5), e) for e in errors],
            "preselect:10": [replay.run(pool, Strategy("preselect", 10), e) for e in errors],
            **hybrid_replays}


@dataclass(frozen=True)
class ReplaySetting:
    """What every left-out IVP is replayed with: the rows, their whole pools, each pool's noise."""
    rows: Rows
    measured: pd.DataFrame
    pools: list                      # whole_pools(rows)
    errors: dict                     # pool key -> the pool's timing errors, one draw per seed
    seeds: int
    stop: float
    max_rows: int
    bare: bool                       # hybrid without a model too: two whole pools per other IVP
    offline_all: object = None       # the offline errors calibrated on every whole pool


@dataclass(frozen=True)
class PoolReplay:
    """One whole-pool configuration's share of an evaluation."""
    configuration: dict              # per strategy its numbers, and what other configurations tell
    first_pick: dict                 # hybrid, offline_top1, random: first pick within FIRST_WITHIN
    to_best: list                    # per hybrid replay: measurements until within LOSS_WITHIN
    decided: list                    # hybrid's stop decisions against the outcomes
    bare_decided: list               # the same without a model


@dataclass(frozen=True)
class LeftOut:
    """One left-out IVP's share of an evaluation, its configurations in the order replayed."""
    accuracy: dict
    predictions: list
    replayed: list                   # PoolReplay per whole-pool configuration of the IVP
    offline: dict | None             # the no-model prior's calibration on the other IVPs


def evaluate(rows: Rows, stop: float = HYBRID_STOP, max_rows: int = 2000,
             with_tpe: bool = False, noise: Noise | None = None, seeds: int = 1) -> Evaluation:
    """Leave one IVP out: models fitted on the other IVPs' measured rows score this IVP's rows, and
    every strategy is replayed on its whole-pool configurations (with_tpe: Optuna's TPE too, at
    hybrid's mean count), each timing drawn with the noise under each of `seeds` seeds (without
    noise: once, as stored); the metrics are judged by the stored times. On one BLAS thread: its
    matrices are small (a pool's), and two threads made them 5-10x slower on two busy cores."""
    with threadpool_limits(1, user_api="blas"):
        return _evaluated(rows, stop, max_rows, with_tpe, noise, seeds)


def _evaluated(rows: Rows, stop: float, max_rows: int, with_tpe: bool, noise: Noise | None,
               seeds: int) -> Evaluation:
    if with_tpe:
        optuna_module()         # refused before anything runs when the extra is missing
    ivps = sorted(set(rows.measured["ivp"]))
    if len(ivps) < 2:
        raise RequestError(f"the store's measurements cover {len(ivps)} IVP(s); leaving one out "
                           "needs at least two")
    setting = replay_setting(rows, noise, seeds, stop, max_rows, ivps)
    folds, notes = {}, []
    for ivp, found in zip(ivps, in_parallel.mapped(_left_out, setting, ivps)):
        if isinstance(found, str):
            notes.append(found)
        else:
            folds[ivp] = found
    replayed = [r for fold in folds.values() for r in fold.replayed]
    if not replayed:
        raise RequestError("no whole-pool configuration to replay strategies on (every variant "
                           "of a configuration measured: tune with --strategy run_all)")
    k = max(1, round(float(np.mean([r.configuration["hybrid"]["measured"] for r in replayed]))))
    # equal-cost baselines at hybrid's mean count: with noise a random or TPE seed per noise
    # seed, without it RANDOM_SEEDS (TPE_SEEDS) seeds on the stored times
    per_config = [{**r.configuration, **_equal_cost(setting, r.configuration, k,
                                                     noise is not None, with_tpe)}
                  for r in replayed]
    # the model's spread (of its contenders' pairs) where one draws, else the pooled errors'
    described = ({"source": noise.source, "seeds": setting.seeds,
                  "spread_log": noise.model.spread if noise.model else noise.spread,
                  **({"model": noise.model.as_dict()} if noise.model else {})}
                 if noise is not None else {"source": "none: the stored times replayed as they are",
                                            "seeds": 1})
    return _assembled(setting, folds, replayed, per_config, notes, described)


def replay_setting(rows: Rows, noise: Noise | None, seeds: int, stop: float, max_rows: int,
             ivps: list) -> ReplaySetting:
    pools = whole_pools(rows)
    seeds = max(1, seeds) if noise is not None else 1
    errors = {p.key: [pool_draws(noise, seed, p, CEILING_ROUNDS) for seed in range(seeds)]
              for p in pools}
    # without a model, hybrid's prior is calibrated on the other IVPs' whole pools (needs two)
    bare = all(sum(p.key[1] != ivp for p in pools) >= 2 for ivp in ivps)
    return ReplaySetting(rows, rows.measured, pools, errors, seeds, stop, max_rows, bare,
                         calibrated([p.frame for p in pools]) if len(pools) >= 2 else None)


def left_out(rows: Rows, ivp: str) -> tuple[Rows, pd.DataFrame]:
    """The rows to train on with ivp left out, and ivp's measured rows to score."""
    train = Rows(rows.frame[rows.frame["ivp"] != ivp], rows.feature_schema, rows.machine_sha256)
    measured = rows.measured
    return train, measured[measured["ivp"] == ivp].reset_index(drop=True)


def _left_out(setting: ReplaySetting, ivp: str) -> LeftOut | str:
    """The models trained without ivp scored on its rows, and the strategies replayed on its whole
    pools; a note instead where the other IVPs have too few rows to train on."""
    train, test = left_out(setting.rows, ivp)
    if len(train.measured) < MIN_ROWS:
        return (f"{ivp}: {len(train.measured)} training rows from the other IVPs; "
                f"skipped (a model needs {MIN_ROWS})")
    gp, linear = (fit(train, kind, setting.max_rows, left_out=ivp) for kind in ("gp", "linear"))
    corrected, spread = _corrected(train, test, gp, linear)
    accuracy = {"rows": len(test), "training_rows": len(gp.row_ids),
                **accuracy_of(test, corrected)}
    predictions = [{**row, **{name: float(values[position]) for name, values in corrected.items()},
                    "gp_std_log": float(spread[position])}
                   for position, row in enumerate(
                       test[[*CONFIG, "variant", "median_s"]].to_dict("records"))]
    best_variant = _best_trained(setting, train, ivp)
    mine = sorted((p for p in setting.pools if p.key[1] == ivp), key=lambda p: p.key)
    others = [p.frame for p in setting.pools if p.key[1] != ivp]
    calibration_here = calibrated(others, setting.offline_all) if setting.bare else None
    effects_here = effects_of(others) if setting.bare else None
    hybrids = _hybrid_replays(setting, mine, gp, calibration_here, effects_here)
    return LeftOut(accuracy, predictions,
                   [_pool_replay(setting, pool, hybrids[pool.key], best_variant) for pool in mine],
                   calibration_here.as_dict() if calibration_here is not None else None)


def _corrected(train: Rows, test: pd.DataFrame, gp, linear) -> tuple[dict, np.ndarray]:
    """Each predictor's times of the test rows, and the Gaussian process's spread (in log)."""
    trivial = float(np.median(train.target()))
    variants, features = test["variant"].tolist(), test["features"].tolist()
    predicted = test["predicted_s"].to_numpy(float)
    gp_mean, spread = gp.correction(variants, features)
    return {"offline": predicted, "trivial": predicted * math.exp(trivial),
            "linear": predicted * np.exp(linear.correction(variants, features)[0]),
            "gp": predicted * np.exp(gp_mean),
            OTHER_SIZES: predicted * np.exp(_with_other_sizes(gp, test))}, spread


def _best_trained(setting: ReplaySetting, train: Rows, ivp: str) -> str:
    """The best variant over the other IVPs' whole pools; without one, over what they measured."""
    whole = {p.key for p in setting.pools if p.key[1] != ivp}
    trained = train.measured
    in_whole = trained[[tuple(k) in whole for k in
                        trained[list(CONFIG)].itertuples(index=False)]]
    return _best_variant(in_whole if not in_whole.empty else trained)


def _hybrid_replays(setting: ReplaySetting, mine: list, gp, calibration_here,
                    effects_here) -> dict:
    """pool key -> replay name -> one replay per noise seed: hybrid (and capped) on each method's
    pools together with the model; without a model each pool alone, its prior the kernel effects
    of the other IVPs (where they have 3 pools) and the offline errors calibrated there."""
    hybrids: dict = {}
    for method in dict.fromkeys(p.key[0] for p in mine):
        group = [p for p in mine if p.key[0] == method]
        prior = replay.hybrid_prior(group, gp)
        # without a model the configurations are independent: a belief each
        priors = {NO_MODEL: effects_here, OFFLINE_ERRORS: None} if setting.bare else {}
        alone = {name: [replay.hybrid_prior([p], None, calibration_here, effects) for p in group]
                 for name, effects in priors.items()
                 if effects is not None or name == OFFLINE_ERRORS}
        for seed in range(setting.seeds):
            found = _hybrids_once(setting, group, gp, prior, alone, seed)
            for name, results in found.items():
                for pool, result in zip(group, results):
                    hybrids.setdefault(pool.key, {}).setdefault(name, []).append(result)
    return hybrids


def _hybrids_once(setting: ReplaySetting, group: list, gp, prior, alone: dict, seed: int) -> dict:
    """Hybrid's replays of one method's pools under one noise seed, by name."""
    drawn = [setting.errors[p.key][seed] for p in group]
    found = {"hybrid": replay.hybrid_together(group, gp, setting.stop, errors=drawn, prior=prior),
             f"hybrid@{CAPPED}": replay.hybrid_together(
                 group, gp, setting.stop, CAPPED, errors=drawn, prior=prior)}
    for name, priors in alone.items():
        found[name] = [replay.hybrid_together([p], None, setting.stop, errors=[e], prior=a)[0]
                       for p, e, a in zip(group, drawn, priors)]
    return found


def _pool_replay(setting: ReplaySetting, pool: replay.StoredPool, hybrids: dict,
                 best_variant: str) -> PoolReplay:
    """Every strategy's numbers on one pool, with what hybrid's replays of it decided."""
    hybrid_replays = hybrids["hybrid"]
    replays = _replays(pool, hybrids, best_variant, setting.errors[pool.key])
    numbers = {name: pool_numbers(pool, r) for name, r in replays.items()}
    times = pool.times
    t_best = times.min()
    first_pick = {"hybrid": times[hybrid_replays[0].order[0]] <= t_best * (1 + FIRST_WITHIN),
                  "offline_top1": times[pool.by_prediction()[0]] <= t_best * (1 + FIRST_WITHIN),
                  "random": float(np.mean(times <= t_best * (1 + FIRST_WITHIN)))}
    configuration = {"key": list(pool.key), "pool": len(pool.frame), **numbers,
                     "transfer": transfer.configuration_transfer(pool, setting.pools,
                                                                 FIRST_WITHIN, LOSS_WITHIN)}
    return PoolReplay(
        configuration, first_pick,
        [metrics.measurements_to_within(times, r.order, LOSS_WITHIN) for r in hybrid_replays],
        [d for r in hybrid_replays for d in calibration.outcomes(times, r.order, r.decisions)],
        [d for r in hybrids.get(NO_MODEL, [])
         for d in calibration.outcomes(times, r.order, r.decisions)])


def _equal_cost(setting: ReplaySetting, config: dict, k: int, noisy: bool, with_tpe: bool) -> dict:
    """top_k, random (and TPE) at k measurements on one configuration's pool."""
    pool = next(p for p in setting.pools if list(p.key) == config["key"])
    errors = setting.errors[pool.key]
    mine = errors if noisy else [None] * RANDOM_SEEDS
    out = {f"top_k:{k}": pool_numbers(pool, [replay.run(pool, Strategy("top_k", k=k), e)
                                             for e in errors]),
           f"random:{k}": pool_numbers(pool, [
               replay.run(pool, Strategy("random", k=k, seed=seed), e)
               for seed, e in enumerate(mine)])}
    if with_tpe:
        out[f"tpe:{k}"] = pool_numbers(pool, [
            replay.run(pool, Strategy("tpe", k=k, seed=seed), e)
            for seed, e in enumerate(mine if noisy else mine[:TPE_SEEDS])])
    return out


def _assembled(setting: ReplaySetting, folds: dict, replayed: list, per_config: list, notes: list,
               described: dict) -> Evaluation:
    """The evaluation's record from the left-out IVPs' shares and every configuration's numbers."""
    names = [name for name in per_config[0] if name not in ("key", "pool", "transfer")]
    strategies = {name: strategy_summary([c[name] for c in per_config], setting.seeds)
                  for name in names}
    shares = {name: float(np.mean([r.first_pick[name] for r in replayed]))
              for name in ("hybrid", "offline_top1", "random")}
    curves = {name: mean_curve([c[name]["curve"] for c in per_config]) for name in names}
    curves["random expectation"] = mean_curve([
        (metrics.random_search_expectation(p.times, min(CURVE, len(p.times))) / p.times.min()).tolist()
        for p in setting.pools if p.key[1] in folds])
    configurations = [{**c, **{name: {key: value for key, value in c[name].items()
                                      if key not in ("curve", "seeds")} for name in names}}
                      for c in per_config]
    offline = {"all": setting.offline_all.as_dict()} if setting.offline_all is not None else {}
    offline.update({ivp: fold.offline for ivp, fold in folds.items() if fold.offline is not None})
    return Evaluation(
        strategies, {ivp: fold.accuracy for ivp, fold in folds.items()}, configurations, shares,
        to_best([c for r in replayed for c in r.to_best]), curves,
        [p for fold in folds.values() for p in fold.predictions], notes,
        transfer.summary([c["transfer"] for c in per_config]), described,
        calibration.reliability([d for r in replayed for d in r.decided]),
        {"fits": offline,
         "reliability": calibration.reliability([d for r in replayed for d in r.bare_decided])})


def regime_errors(rows: Rows) -> dict:
    """The offline model's median relative error per size regime (the cache level one step's
    working set fits in) over the measured rows."""
    measured = rows.measured
    if measured.empty:
        return {}
    error = (measured["predicted_s"] - measured["median_s"]).abs() / measured["median_s"]
    regimes = measured["features"].map(regime)
    return {name: {"rows": int((regimes == name).sum()),
                   "median_rel_error": float(error[regimes == name].median()),
                   "median_ratio": float((measured["predicted_s"] / measured["median_s"])[
                       regimes == name].median())}
            for name in ("L1", "L2", "L3", "MEM") if (regimes == name).any()}
