"""Fitting the correction models on measured rows, a stratified subsample where there are many.

Hyperparameters are fitted on a smaller one; the size used is stated.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import nnls
from sklearn.base import clone

from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.learn.encode import KEPT_SETS, Encoding, encoding_for, regime
from hybridtune.learn.level import Levels, levels_of
from hybridtune.learn.models import GPCorrection, LinearCorrection
from hybridtune.learn.table import CONFIG, POOL_MEDIAN, Rows, with_ranks

MIN_ROWS = 20            # fewer measured variants than this teach a model nothing it can carry
MAX_ROWS = 2000          # a Gaussian process conditions on at most this many rows
HYPER_ROWS = 500         # and fits its hyperparameters on at most this many of them
KINDS = ("linear", "gp")


@dataclass(frozen=True)
class Fitted:
    """A fitted correction model and what it was fitted on."""
    kind: str
    estimator: object
    encoding: Encoding
    feature_schema: str
    machine_sha256: str
    hardware_id: str
    row_ids: tuple                     # the measurements it was fitted on
    provenance: tuple                  # per row: (code_sha256, build_id, hardware_id)
    available_rows: int                # measured rows there were
    seconds: float = 0.0
    score: dict = field(default_factory=dict)
    offset_spread: float = 0.0         # on a new IVP: its configurations' common error
    variant_spread: float = 0.0        # and a variant's error about that,
    error_covariance: tuple = (0.0, 0.0)   # as shared * correlation + own * identity
    levels: Levels = Levels(())       # the configuration's level the estimator's output is added to
    across: tuple = ()                # (per log n, per log threads): how fast the errors of one
    #                                   IVP's configurations decorrelate (none: independent)
    other_hardware: str = ""          # where used on other hardware: the hardware it was trained
    hardware_spread: float = 0.0      # on, and what that adds to a variant's own error

    def correction(self, variants, feature_rows):
        """Mean and standard deviation of log(measured / predicted) for these rows: on a
        configuration it was trained on, the estimator's own; elsewhere with the errors the model
        makes on an IVP it has not seen."""
        mean, std = self.estimator.predict(self.encoding.matrix(variants, feature_rows),
                                           return_std=True)
        unseen = np.sqrt(std ** 2 + self.offset_spread ** 2 + self.variant_spread ** 2)
        return (self.levels.of(feature_rows) + mean - pool_offsets(feature_rows),
                np.where(self.levels.trained(feature_rows), std, unseen))


def pool_offsets(feature_rows) -> np.ndarray:
    """log(prediction / its configuration's median prediction) per feature row (0 where the pool
    is not known). A model learns log(measured / that median): how a variant's time stands in
    its pool transfers between IVPs better than the offline model's error on it does."""
    return np.array([math.log(f["predicted_s"] / f[POOL_MEDIAN]) if f.get(POOL_MEDIAN) else 0.0
                     for f in feature_rows])


def pool_targets(frame: pd.DataFrame) -> np.ndarray:
    """log(measured / the configuration's median prediction) of measured rows."""
    return (np.log(frame["median_s"].to_numpy(float) / frame["predicted_s"].to_numpy(float))
            + pool_offsets(frame["features"].tolist()))


def stratified_sample(frame: pd.DataFrame, limit: int, seed: int = 0) -> pd.DataFrame:
    """At most limit rows, each stratum (IVP, size regime, layout) keeping its share and at least
    one row (while there are no more strata than limit; else the limit largest keep one each)."""
    if len(frame) <= limit:
        return frame
    frame = with_ranks(frame)
    strata = list(zip(frame["ivp"], frame["features"].map(regime), frame["ranks"],
                      frame["threads"]))
    groups: dict = {}
    for position, stratum in enumerate(strata):
        groups.setdefault(stratum, []).append(position)
    quotas = _quotas({stratum: len(members) for stratum, members in groups.items()}, limit)
    generator = np.random.default_rng(seed)
    keep = []
    for stratum in sorted(groups):
        if quotas[stratum]:
            keep.extend(generator.choice(groups[stratum], size=quotas[stratum], replace=False))
    return frame.iloc[sorted(keep)]


def _quotas(sizes: dict, limit: int) -> dict:
    """Rows per stratum summing to limit (less than the sizes' sum): the shares rounded by largest
    remainder, at least one each while there are no more strata than limit."""
    ordered = sorted(sizes, key=lambda stratum: (-sizes[stratum], stratum))
    if len(sizes) >= limit:
        return {stratum: int(position < limit) for position, stratum in enumerate(ordered)}
    total = sum(sizes.values())
    exact = {stratum: limit * size / total for stratum, size in sizes.items()}
    quota = {stratum: max(1, math.floor(share)) for stratum, share in exact.items()}
    while sum(quota.values()) > limit:      # strata raised to one: take from the most over share
        stratum = max((s for s in ordered if quota[s] > 1), key=lambda s: quota[s] - exact[s])
        quota[stratum] -= 1
    while sum(quota.values()) < limit:      # the rest by largest remainder
        stratum = max((s for s in ordered if quota[s] < sizes[s]),
                      key=lambda s: exact[s] - quota[s])
        quota[stratum] += 1
    return quota


def _estimator(kind: str, X: np.ndarray, y: np.ndarray, seed: int):
    if kind == "linear":
        return LinearCorrection().fit(X, y)
    tuned = GPCorrection(random_state=seed).fit(X[:HYPER_ROWS], y[:HYPER_ROWS])
    return GPCorrection(length_scale=tuned.length_scale_, constant=tuned.constant_,
                        noise_level=tuned.noise_level_, optimize=False,
                        random_state=seed).fit(X, y)


def centred(y: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """y less its configuration's median: a model learns how variants of a configuration differ,
    the level of a new configuration comes from the nearest training configurations (Levels)."""
    medians = {key: np.median(y[keys == key]) for key in set(keys)}
    return y - np.array([medians[key] for key in keys])


def errors_on_new_ivps(estimator, X: np.ndarray, y: np.ndarray, keys: np.ndarray,
                       ivps: np.ndarray, feature_rows: list, variants: list | None = None
                       ) -> tuple[float, float, tuple, tuple]:
    """The model's errors on an IVP it has not seen, each training IVP left out in turn (same
    hyperparameters): the robust spread (median absolute value / 0.6745) of each configuration's
    median error and of each variant's error about its configuration's median, that error as a
    covariance, shared * correlation + own * identity (see error_covariance; (0, 0) for a model
    without a correlation), and with variants how it decorrelates between the configurations of
    one IVP (see decorrelation). Zeros with fewer than two IVPs."""
    if len(set(ivps)) < 2:
        return 0.0, 0.0, (0.0, 0.0), ()
    offsets, own, samples, pairs = [], [], [], []
    for name in sorted(set(ivps)):
        out = ivps == name
        rest = np.flatnonzero(~out)
        levels = levels_of(y[rest], keys[rest], [feature_rows[i] for i in rest])
        level = levels.of([feature_rows[i] for i in np.flatnonzero(out)])
        model = clone(estimator).fit(X[rest], centred(y[rest], keys[rest]))
        error = y[out] - level - model.predict(X[out])
        for key in sorted(set(keys[out])):
            mine = keys[out] == key
            offsets.append(np.median(error[mine]))
            own.append(error[mine] - offsets[-1])
            if hasattr(model, "correlation") and mine.sum() > 2:
                samples.append((own[-1], model.correlation(X[out][mine])))
        if variants is not None:
            positions = np.flatnonzero(out)
            pairs += configuration_pairs(error, keys[out], [variants[i] for i in positions],
                                         [feature_rows[i] for i in positions])
    robust = 1 / 0.6745
    return (float(np.median(np.abs(offsets))) * robust,
            float(np.median(np.abs(np.concatenate(own)))) * robust,
            error_covariance(samples), decorrelation(pairs))


MIN_PAIRED = 8           # variants two configurations must share for their errors' correlation


def configuration_pairs(error: np.ndarray, keys: np.ndarray, variants: list,
                        feature_rows: list) -> list:
    """Per two configurations of one IVP with MIN_PAIRED variants in common: their distance in
    log n and log threads, the correlation of those variants' errors (each about its
    configuration's median) and how many there are."""
    by_key: dict = {}
    for position, key in enumerate(keys):
        by_key.setdefault(key, {})[variants[position]] = position
    configs = sorted(by_key)
    pairs = []
    for i, first in enumerate(configs):
        for second in configs[i + 1:]:
            common = sorted(set(by_key[first]) & set(by_key[second]))
            if len(common) < MIN_PAIRED:
                continue
            a = error[[by_key[first][v] for v in common]]
            b = error[[by_key[second][v] for v in common]]
            if a.std() == 0 or b.std() == 0:
                continue
            fa, fb = feature_rows[by_key[first][common[0]]], feature_rows[by_key[second][common[0]]]
            pairs.append((abs(math.log(fa["n"] / fb["n"])),
                          abs(math.log((fa.get("threads") or 1) / (fb.get("threads") or 1))),
                          float(np.corrcoef(a - np.median(a), b - np.median(b))[0, 1]),
                          len(common)))
    return pairs


def decorrelation(pairs) -> tuple:
    """(per log n, per log threads) of correlation = exp(-a |log n/n'| - b |log t/t'|), fitted
    to the pairs' correlations (clipped to [0.05, 0.99]) by least squares on their logs, each
    pair weighted by its count; () without pairs (configurations taken as independent)."""
    if not pairs:
        return ()
    distances = np.array([(d_n, d_t) for d_n, d_t, _, _ in pairs])
    decay = -np.log(np.clip([r for _, _, r, _ in pairs], 0.05, 0.99))
    weights = np.sqrt([count for *_, count in pairs])
    rates, _ = nnls(distances * weights[:, None], decay * weights)
    if not np.all(distances.any(axis=0)):       # a distance no pair spans: unknown, independent
        rates[~distances.any(axis=0)] = math.inf
    return tuple(float(r) for r in rates)


def error_covariance(samples) -> tuple[float, float]:
    """(shared, own) fitted to samples of (one configuration's errors, their correlation C) by
    least squares on all pairs: error_i * error_j = shared * (HCH)_ij + own * H_ij, errors and
    correlations centred on the configuration's mean (H the centring matrix). `shared` is the
    part of the error similar variants have in common, `own` a variant's alone; (0, 0) without
    samples, and neither below zero."""
    normal = np.zeros((2, 3))
    for error, correlation in samples:
        size = len(error)
        centring = np.eye(size) - 1.0 / size
        products = np.outer(error - error.mean(), error - error.mean()).ravel()
        basis = ((centring @ correlation @ centring).ravel(), centring.ravel())
        normal += np.array([[a @ b for b in basis] + [a @ products] for a in basis])
    if not normal.any():
        return 0.0, 0.0
    shared, own = np.linalg.lstsq(normal[:, :2], normal[:, 2], rcond=None)[0]
    return float(max(shared, 0.0)), float(max(own, 0.0))


class LeftOutRow(HybridtuneError):
    """A fit that must not see an IVP was handed a row of it."""


def fit(rows: Rows, kind: str, max_rows: int = MAX_ROWS, seed: int = 0,
        left_out: str | None = None, feature_sets: tuple = KEPT_SETS) -> Fitted:
    """One model of `kind` on the measured rows (subsampled to max_rows); where an IVP is
    left_out (an evaluation scores the model on it), a row of it raises LeftOutRow."""
    if kind not in KINDS:
        raise RequestError(f"model kind {kind!r}: expected one of {', '.join(KINDS)}")
    if left_out is not None and (rows.frame["ivp"] == left_out).any():
        raise LeftOutRow(f"a fit that leaves {left_out} out was handed "
                         f"{int((rows.frame['ivp'] == left_out).sum())} of its rows")
    measured = rows.measured
    if len(measured) < MIN_ROWS:
        raise RequestError(f"{len(measured)} measured variants with predictions in the store; a "
                           f"model needs at least {MIN_ROWS}: tune (or run_all) more "
                           "configurations first")
    hardware = measured["hardware_id"].value_counts().index[0]
    measured = measured[measured["hardware_id"] == hardware]
    used = stratified_sample(measured, max_rows, seed)
    # the hyperparameters see a stratified subsample too: put it first
    first = stratified_sample(used, HYPER_ROWS, seed + 1)
    used = pd.concat([first, used.drop(index=first.index)])
    variants, features = used["variant"].tolist(), used["features"].tolist()
    encoding = encoding_for(variants, features, feature_sets=feature_sets)
    X = encoding.matrix(variants, features)
    y = pool_targets(used)
    keys = configuration_keys(used)
    target = centred(y, keys)
    start = time.perf_counter()
    estimator = _estimator(kind, X, target, seed)
    offset, own, covariance, across = errors_on_new_ivps(
        estimator, X, y, keys, used["ivp"].to_numpy(), features, variants)
    seconds = time.perf_counter() - start
    provenance = tuple(zip(used["code_sha256"], used["build_id"], used["hardware_id"]))
    return Fitted(kind, estimator, encoding, rows.feature_schema, rows.machine_sha256, hardware,
                  tuple(used["row_id"]), provenance, len(measured), seconds,
                  {"r2_in_sample": float(estimator.score(X, target))}, offset, own, covariance,
                  levels_of(y, keys, features), across)


def configuration_keys(frame: pd.DataFrame) -> np.ndarray:
    """Per row its configuration (method, IVP, n, ranks, threads) as one string."""
    return np.array(["|".join(map(str, key)) for key in
                     with_ranks(frame)[list(CONFIG)].itertuples(index=False)])
