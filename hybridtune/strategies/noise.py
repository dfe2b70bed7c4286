"""Run-to-run noise of a timing as the replay draws it: a store's own passes, else a model of them.

A pool whose variants were each timed in two passes is replayed from them (a first timing is one
pass); others draw from the noise model fitted to the store's pairs of passes (strategies/
noise_model); a store of one pass draws from the shipped ground truth's model, and says so.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from hybridtune.learn.table import CONFIG, KEY, ok_measurements
from hybridtune.errors import RequestError
from hybridtune.learn.timing import NOT_TUNING_FIRST, RETIMED
from hybridtune.strategies.noise_model import (NEAR_LEAST, NoiseModel, contender_pairs,
                                               fit_noise, retime_spread)

MIN_PAIRS = 30              # pairs of passes a store needs for its own noise
# Drawn where a store holds one pass: the model fitted to the shipped ground truth's contenders'
# pairs of passes (data/groundtruth, Intel Xeon; the values' source:
# docs/benchmarks.md#constants-set-from-measurements)
SHIPPED_NOISE = NoiseModel(spread=0.0173, drift=0.455, tail_rate=0.0096, tails=(0.083,),
                           retime_spread=0.0150, pairs=52)
SHIPPED_SAMPLE = 4000       # first timings drawn from it for its summary (spread)


class TooFewPairs(RequestError):
    """A store with some pairs of passes, too few to fit its own noise."""


@dataclass(frozen=True)
class Noise:
    """Log errors of one timing (symmetric, the common shift of a pass removed), drawn with
    replacement; source says where they come from."""
    errors: np.ndarray
    source: str
    pairs: int = 0
    model: NoiseModel | None = None     # fitted to all contenders' pairs: drawn where a pool
    models: dict = field(default_factory=dict)   # lacks pairs; per configuration its own
    # configuration -> variant -> (one, two) seconds, and each pass's own ci_rel
    passes: dict = field(default_factory=dict)

    @property
    def spread(self) -> float:
        """Robust standard deviation (1.4826 MAD) of one timing's log error."""
        return float(1.4826 * np.median(np.abs(self.errors)))

    def draw(self, generator: np.random.Generator, shape) -> np.ndarray:
        return generator.choice(self.errors, size=shape)


def shipped(retimings: pd.Series | None = None) -> Noise:
    """The shipped ground truth's noise model (its re-timing spread the store's own where it
    holds enough re-timings: noise_model.retime_spread)."""
    own = retime_spread(retimings)
    model = SHIPPED_NOISE if own is None else replace(SHIPPED_NOISE, retime_spread=own)
    sample = model.draw(np.random.default_rng(0), SHIPPED_SAMPLE)[:, 0]
    return Noise(sample, "the store holds one pass: drawn from the shipped ground truth's noise "
                         f"model (spread {model.spread:.3f}, drift {model.drift:.2f}, slow tails "
                         f"{100 * model.tail_rate:.1f}%, re-timing spread "
                         f"{model.retime_spread:.3f})", 0, model)


def pass_ratios(measurements: pd.DataFrame, hardware_id: str | None = None) -> pd.DataFrame:
    """Per variant of a configuration timed in two runs (first timings of the same code and
    flags), log(second / first), with its configuration's median of them (the common shift)."""
    ok = ok_measurements(measurements, hardware_id)
    if ok.empty or "run_id" not in ok:
        return pd.DataFrame(columns=list(KEY) + ["ratio", "shift"])
    first = ok[~ok["timing"].isin(NOT_TUNING_FIRST)]    # in the store's order: appending
    first = first.drop_duplicates(list(KEY) + ["code_sha256", "compiler_flags", "run_id"])
    same = list(KEY) + ["code_sha256", "compiler_flags"]
    first = first.assign(_pass=first.groupby(same).cumcount(), order=np.arange(len(first)))
    one, two = (first[first["_pass"] == k].set_index(same) for k in (0, 1))
    both = pd.concat({"one": one["median_s"], "two": two["median_s"], "one_ci": one["ci_rel"],
                      "two_ci": two["ci_rel"], "order": one["order"]},
                     axis=1, join="inner").reset_index()
    both["ratio"] = np.log(both["two"].to_numpy(float) / both["one"].to_numpy(float))
    both["shift"] = both.groupby(list(CONFIG))["ratio"].transform("median")
    return both[list(KEY) + ["one", "two", "one_ci", "two_ci", "ratio", "shift", "order"]]


def retime_errors(measurements: pd.DataFrame, hardware_id: str | None = None) -> pd.Series:
    """Log errors of the interleaved re-timings about the geometric mean of their variant's first
    timings, each round's common shift removed."""
    ok = ok_measurements(measurements, hardware_id)
    if ok.empty or "timing" not in ok:
        return pd.Series(dtype=float)
    first = ok[~ok["timing"].isin(NOT_TUNING_FIRST)]
    truth = first.assign(_log=np.log(first["median_s"].to_numpy(float))) \
        .groupby(list(KEY), as_index=False)["_log"].mean()
    joined = ok[ok["timing"] == RETIMED].merge(truth, on=list(KEY))
    error = np.log(joined["median_s"].to_numpy(float)) - joined["_log"].to_numpy(float)
    joined = joined.assign(_error=error)
    return joined["_error"] - joined.groupby(list(CONFIG) + ["run_id"])["_error"].transform("median")


def pass_agreement(measurements: pd.DataFrame, hardware_id: str | None = None,
                   min_pairs: int = 10) -> dict:
    """Per IVP, how far two passes order its variants alike: the mean over its configurations
    (those with min_pairs variants timed twice) of the Kendall tau between the passes' first
    timings, and the tau the true times would reach against the mean of the two passes (the
    most a model's tau can be expected to reach; tau_ceiling)."""
    pairs = pass_ratios(measurements, hardware_id)
    out: dict = {}
    for (ivp, *_), pool in pairs.groupby(["ivp", "method", "n", "ranks", "threads"]):
        if len(pool) >= min_pairs:
            out.setdefault(ivp, []).append(
                (float(kendalltau(pool["one"], pool["two"]).statistic), len(pool)))
    return {ivp: {"kendall_tau": float(np.mean([t for t, _ in found])),
                  "tau_ceiling": float(np.mean([tau_ceiling(t) for t, _ in found])),
                  "configurations": len(found), "pairs": sum(k for _, k in found)}
            for ivp, found in sorted(out.items())}


def tau_ceiling(between_passes: float) -> float:
    """The Kendall tau of the true times against the mean of two passes whose tau between each
    other is between_passes, each pass the truth plus independent noise of one spread (jointly
    normal: tau = 2/pi asin(rho), and the mean of two halves the noise's variance)."""
    rho = math.sin(math.pi * max(between_passes, 0.0) / 2)
    return 2 / math.pi * math.asin(math.sqrt(2 * rho / (1 + rho)))


def measured(measurements: pd.DataFrame, hardware_id: str | None = None) -> Noise:
    """The store's own noise where it holds MIN_PAIRS pairs of passes (each pair's log ratio less
    its configuration's shift, over sqrt(2), with both signs, and the model fitted to them); the
    shipped model where it holds one pass; refused (TooFewPairs) in between."""
    pairs = pass_ratios(measurements, hardware_id)
    retimed = retime_errors(measurements, hardware_id)
    if pairs.empty:
        return shipped(retimed)
    if len(pairs) < MIN_PAIRS:
        raise TooFewPairs(f"the store holds {len(pairs)} pairs of passes (variants timed in two "
                          f"runs); fitting its noise needs {MIN_PAIRS}: measure more of them "
                          "twice, or evaluate a store of one pass (then the shipped ground "
                          "truth's noise model is drawn)")
    errors = (pairs["ratio"] - pairs["shift"]).to_numpy(float) / math.sqrt(2)
    configurations = pairs[list(CONFIG)].drop_duplicates()
    near = contender_pairs(pairs)
    model = fit_noise(near, retimed)
    models = {tuple(key): fit_noise(group, retimed) for key, group in near.groupby(list(CONFIG))
              if len(group) >= NEAR_LEAST}
    passes: dict = {}
    for row in pairs.itertuples(index=False):
        key = tuple(getattr(row, name) for name in CONFIG)
        passes.setdefault(key, {})[row.variant] = (
            float(row.one), float(row.two), *np.nan_to_num([row.one_ci, row.two_ci]).tolist())
    return Noise(np.concatenate([errors, -errors]),
                 f"measured: {len(pairs)} pairs of passes in {len(configurations)} "
                 "configuration(s): a pool timed in both replayed from them, others drawn from "
                 f"the model of its contenders' pairs (spread {model.spread:.3f}, drift "
                 f"{model.drift:.2f}, slow tails {100 * model.tail_rate:.1f}%, re-timing spread "
                 f"{model.retime_spread:.3f})", len(pairs), model, models, passes)


def draws(noise: Noise | None, seed: int, key: tuple, size: int, rounds: int = 1) -> np.ndarray:
    """(size, 1 + rounds) log errors of a pool's first timings and re-timings under one noise
    seed, drawn from the store's errors or its model (no passes): the same for every strategy
    replayed on the pool (common random numbers); zeros without noise."""
    if noise is None:
        return np.zeros((size, 1 + rounds))
    generator = seeded_generator(seed, key)
    if noise.model is None:
        return noise.draw(generator, (size, 1 + rounds))
    return noise.models.get(tuple(key), noise.model).draw(generator, size, rounds)


class PassDraws(np.ndarray):
    """A pool's draws (as draws()) whose first timings are one stored pass: ci_rel, per row, is
    that pass's own interval, what a live run would have been told with it (not the interval
    spanning both passes, which knows the other)."""
    ci_rel: np.ndarray

    def __array_finalize__(self, source) -> None:
        self.ci_rel = getattr(source, "ci_rel", None)

    def __reduce__(self):
        rebuild, arguments, state = super().__reduce__()
        return rebuild, arguments, (state, self.ci_rel)

    def __setstate__(self, state) -> None:
        super().__setstate__(state[0])
        self.ci_rel = state[1]


def pool_draws(noise: Noise | None, seed: int, pool, rounds: int = 1) -> np.ndarray:
    """draws() for a pool (key, frame of variants, times): where the store timed each of its
    variants in two passes, the first timings are one of them (seed even: the first pass, odd:
    the second) about the pool's times, and only the re-timings are drawn. Where it timed some
    of them twice, the first timings are drawn too, but each variant timed twice is told one
    pass's own interval (PassDraws), not the one spanning both."""
    size = len(pool.frame)
    timed = noise.passes.get(tuple(pool.key)) if noise is not None else None
    drawn = draws(noise, seed, pool.key, size, rounds)
    if not timed:
        return drawn
    variants = pool.frame["variant"].tolist()
    drawn = drawn.view(PassDraws)
    own = pool.frame["ci_rel"].to_numpy(float)
    drawn.ci_rel = np.array([timed[v][2 + seed % 2] if v in timed else own[row]
                             for row, v in enumerate(variants)])
    if all(v in timed for v in variants):
        one = np.array([timed[v][seed % 2] for v in variants])
        drawn[:, 0] = np.log(one / pool.times)
    return drawn


def seeded_generator(seed: int, key: tuple) -> np.random.Generator:
    """The noise draws of one pool under one seed (the same for every strategy replayed on it)."""
    if len(key) == 5 and key[3] == 1:   # a pool of one rank draws as it did before ranks were keys
        key = (*key[:3], key[4])
    entropy = [seed, int.from_bytes(hashlib.sha256(repr(key).encode()).digest()[:8], "little")]
    return np.random.default_rng(entropy)
