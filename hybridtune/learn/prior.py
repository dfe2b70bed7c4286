"""Hybrid's prior: the belief before measuring, from a model, kernel effects or the offline model.

A trained Gaussian process gives its correction and covariance with the errors it made on left-out
IVPs; without one, the kernel effects measured on whole pools; without those, the offline model with
the errors it makes within measured pools. Each configuration's rows may be correlated with the same
IVP's other configurations.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from hybridtune.learn.belief import Belief
from hybridtune.learn.kernel_effects import KernelEffects, effects_prior, shipped
from hybridtune.learn.offline_errors import OfflineErrors, centred, similarity
from hybridtune.learn.train import pool_offsets

# Without a model: how the offline model errs within measured pools (learn/offline_errors, fitted
# on the shipped ground truth; `hybridtune evaluate` prints the same fit for any store), and the
# spread of a configuration's level about the prediction. The values' source:
# docs/benchmarks.md#constants-set-from-measurements, as for the two below.
SHIPPED_ERRORS = OfflineErrors(slope=0.143, slope_spread=0.609, shared=1.19, length=80.6,
                               own=0.0388, pools=15)
OFFSET_SPREAD = 0.33
# Without a model, where the variants' kernels are known: how far a configuration's differences
# between its variants may be the kernel effects' scaled (sd of the factor about 1, as each
# configuration's own scales are a priori, learn/adapt.py); a pool flatter than the effects say
# is then told by a few measurements, not read as variants that differ widely
EFFECTS_SLOPE_SPREAD = 1.0
# Without a model, where the variants' kernels are known: the kernel effects measured on the
# shipped ground truths' whole pools (learn/kernel_effects)
SHIPPED_EFFECTS = shipped()
# How alike the kernel effects' deviations are between thread counts of one n and rank count:
# the median correlation of the residuals about the shipped effects between 1 and 2 threads over
# the 14 configurations of the Xeon ground truth with 2-thread samples (20 variants each; -0.09 to
# 0.98); sizes apart, the effects' deviations did not correlate (docs/models.md)
THREADS_CORRELATION = 0.75
# A trained model's covariance of its variants' errors (all but a configuration's common one) is
# scaled by this before each configuration fits its own scale (learn/adapt.py): of the grid 0.4-1,
# the one both ground truths choose, measuring least within a standard error of the best Brier
# skill of hybrid's stop chances (evaluate --constants)
TRAINED_SCALE = 0.4
# A model of other hardware as the prior (tune --prior STORE): a variant's own error (log time)
# widened by this, what leaving one host and one IVP out measured between the shipped ground truths
HARDWARE_SPREAD = 0.126


def across_configurations(across: tuple, configurations) -> np.ndarray:
    """The correlation of a model's errors between the candidates' configurations ((n, threads)
    or (n, threads, ranks) per candidate, all of one method and IVP): exp(-a |log n/n'| -
    b |log t/t'| - b |log r/r'|) for across = (a, b), ranks apart like threads; 1 within a
    configuration, 0 between configurations where across is empty."""
    sizes = np.log(np.array([(c[0], c[1], c[2] if len(c) > 2 else 1) for c in configurations],
                            float).reshape(-1, 3))
    distance = np.abs(sizes[:, None, :] - sizes[None, :, :])
    if not across:
        return np.all(distance == 0, axis=2).astype(float)
    rates = np.broadcast_to(np.asarray((*across, across[-1]), float), distance.shape)
    scaled = np.multiply(rates, distance, out=np.zeros_like(distance), where=distance > 0)
    return np.exp(-scaled.sum(axis=2))


def from_other_hardware(fitted, hardware: str, spread: float):
    """A model trained on other hardware as the prior here: a variant's own error grows by spread
    (what leave-one-host-and-IVP-out measured), and the note names the hardware."""
    shared, own = fitted.error_covariance
    return replace(fitted, error_covariance=(shared, own + spread ** 2),
                   variant_spread=math.hypot(fitted.variant_spread, spread),
                   other_hardware=hardware, hardware_spread=spread)


def prior_belief(fitted, variants, feature_rows, predicted_s, configurations=None,
                 errors: OfflineErrors = SHIPPED_ERRORS,
                 effects: KernelEffects | None = SHIPPED_EFFECTS) -> tuple[Belief, str]:
    """The belief before measuring the candidates (of one configuration, or with configurations,
    (n, threads) per candidate, of several of one method and IVP): a trained Gaussian process's
    correction and covariance, else the kernel effects measured on whole pools (effects;
    kernel_prior), else the offline model with the errors it makes on measured pools (errors;
    offline_prior)."""
    log_predicted = np.log(np.asarray(predicted_s, float))
    if configurations is None:
        configurations = [(1, 1)] * len(log_predicted)
    across = fitted.across if fitted is not None and fitted.kind == "gp" else ()
    together = across_configurations(across, configurations)
    if fitted is not None and fitted.kind == "gp":
        X = fitted.encoding.matrix(variants, feature_rows)
        mean, cov = fitted.estimator.predict_joint(X)
        mean = mean + fitted.levels.of(feature_rows) - pool_offsets(feature_rows)
        # what the model gets wrong on a new IVP: a common error of the configuration (not
        # scaled: a level wrong by far is not variants that differ) and each variant's, partly
        # shared with similar variants and with the same variants in other configurations
        shared, own = fitted.error_covariance
        same = np.asarray(variants)[:, None] == np.asarray(variants)[None, :]
        fixed = together * fitted.offset_spread ** 2
        scaled = TRAINED_SCALE ** 2 * (cov + together * (
            shared * fitted.estimator.correlation(X) + own * same))
        keys = [tuple(c) for c in configurations]
        block = {key: i for i, key in enumerate(dict.fromkeys(keys))}
        belief = Belief(log_predicted + mean, fixed + scaled, {},
                        parts=(fixed, scaled, np.array([block[key] for key in keys])))
        return belief, _trained_note(fitted, across)
    found = effects is not None and kernel_prior(variants, feature_rows, log_predicted,
                                                 configurations, effects)
    if found:
        hosts = f" of {' and '.join(effects.hosts)}" if effects.hosts else ""
        return found, \
            (f"prior: no trained model for this hardware; the kernel effects measured on "
             f"{effects.pools} whole pools{hosts}: how each skeleton and "
             f"kernel variant and the offline model's ranking move a variant's time, and how "
             f"much that differs between pools, {effects.own:.3f} of a variant's own (log time); "
             "per configuration scaled by what its measurements show; the best expected variant "
             "of each skeleton measured before it may stop")
    mean, cov = offline_prior(variants, feature_rows, log_predicted, configurations, errors)
    return Belief(mean, cov, {}), \
        (f"prior: no trained model for this hardware; the offline model itself with the errors it "
         f"makes on measured pools ({errors.pools}): its ranking held with slope {errors.slope:.2f} "
         f"+- {errors.slope_spread:.2f}, a smooth error of {errors.shared:.2f} over the "
         f"variants' features and {errors.own:.3f} of a variant's own (log time); the best "
         "predicted variant of each skeleton measured before it may stop")


def _trained_note(fitted, across: tuple) -> str:
    """What a trained model's prior is, as the run tells it."""
    model = (f"the Gaussian process trained on other hardware ({fitted.other_hardware}; a "
             f"variant's own error inflated by {fitted.hardware_spread:.3f} as leaving a host "
             "and an IVP out measured)" if fitted.other_hardware
             else "the trained Gaussian process")
    return (f"prior: {model} ({len(fitted.row_ids)} training rows), with the errors it made on "
            f"left-out IVPs: {fitted.offset_spread:.3f} common to a "
            f"configuration, {fitted.variant_spread:.3f} of a variant's own (log time), "
            f"partly shared with similar variants{_across_note(across)}; the variants' errors "
            f"scaled by {TRAINED_SCALE} as calibrated on the shipped ground truths, and per "
            "configuration by what its measurements show of the variants' errors and the "
            "timing noise there; each configuration's first measurement the variant that "
            "tells most of its likely fastest; the best expected variant of each skeleton "
            "measured before it may stop")


def kernel_prior(variants, feature_rows, log_predicted: np.ndarray, configurations,
                 effects: KernelEffects) -> Belief | None:
    """The belief under the kernel effects: per configuration its level about the mean predicted
    and the effects' differences scaled by an uncertain factor (OFFSET_SPREAD,
    EFFECTS_SLOPE_SPREAD: the fixed part) and the effects' covariance with a variant's own error
    (the part each configuration scales, Belief.adapt); the effects' deviations correlated
    THREADS_CORRELATION between configurations of one n and ranks at other thread counts, not
    between sizes. None where a configuration's kernels are all unknown to the effects."""
    size = len(log_predicted)
    mean, fixed, scaled = np.empty(size), np.zeros((size, size)), np.zeros((size, size))
    keys = [tuple(c) for c in configurations]
    blocks = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    rows, designs = {}, {}
    for key in blocks:
        mine = np.flatnonzero([k == key for k in keys])
        found = effects_prior(effects, [variants[i] for i in mine],
                              [feature_rows[i] for i in mine], log_predicted[mine])
        if found is None:
            return None
        mean[mine], block, designs[key] = found
        effect = mean[mine] - mean[mine].mean()
        fixed[np.ix_(mine, mine)] = OFFSET_SPREAD ** 2 + \
            EFFECTS_SLOPE_SPREAD ** 2 * np.outer(effect, effect)
        scaled[np.ix_(mine, mine)] = block
        rows[key] = mine
    spread = np.asarray(effects.cov)
    for first in blocks:
        for second in blocks:
            if first != second and _other_threads(first, second):
                scaled[np.ix_(rows[first], rows[second])] = THREADS_CORRELATION * (
                    designs[first] @ spread @ designs[second].T)
    return Belief(mean, fixed + scaled, {},
                  parts=(fixed, scaled, np.array([blocks[key] for key in keys])))


def _other_threads(first: tuple, second: tuple) -> bool:
    """Two configurations ((n, threads[, ranks])) of one n and rank count."""
    return first[0] == second[0] and first[2:] == second[2:] and first[1] != second[1]


def offline_prior(variants, feature_rows, log_predicted: np.ndarray, configurations,
                  errors: OfflineErrors) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of log time where no model was trained for the hardware, each
    configuration apart: its level about the mean predicted (OFFSET_SPREAD), the offline
    ranking scaled by an uncertain slope, a smooth error over the features and a variant's own."""
    mean = np.empty(len(log_predicted))
    cov = np.zeros((len(mean), len(mean)))
    keys = [tuple(c) for c in configurations]
    for key in dict.fromkeys(keys):
        mine = np.flatnonzero([k == key for k in keys])
        c = centred(log_predicted[mine])
        mean[mine] = log_predicted[mine].mean() + errors.slope * c
        cov[np.ix_(mine, mine)] = (
            OFFSET_SPREAD ** 2 + errors.slope_spread ** 2 * np.outer(c, c)
            + errors.shared ** 2 * similarity([variants[i] for i in mine],
                                               [feature_rows[i] for i in mine], errors.length)
            + errors.own ** 2 * np.eye(len(mine)))
    return mean, cov


def _across_note(across: tuple) -> str:
    if not across or not math.isfinite(across[0]):
        return ""
    return (f", and correlated {math.exp(-across[0] * math.log(10)):.2f} with the same variant "
            "at a tenfold size of the same IVP")
