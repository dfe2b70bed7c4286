"""The hybrid strategy's belief over one configuration's variants: a joint Gaussian on log time.

Conditioned on each measurement, it chooses by expected improvement and counts the variants expected
to beat the best held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.linalg import cho_solve, cholesky
from scipy.special import ndtr

from hybridtune.learn.adapt import ADAPT_FROM, fitted_scales
from hybridtune.learn.kernel_effects import KernelEffects, effects_prior, shipped
from hybridtune.learn.offline_errors import OfflineErrors, centred, similarity
from hybridtune.learn.timing import TIMING_SPREAD, own_variance
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
# the stop's event: an unmeasured variant this much faster than the best held
BETTER_BY = 0.03
DRAWS = 512              # joint draws behind the chance that some variant is better
DRAWS_SEED = 0           # of the prior's joint draws and their observation noise


@dataclass
class Belief:
    """log time ~ N(mean, cov) over the candidates before any measurement; observe() conditions.
    drawn: the prior's joint draws and the observation noise's (DRAWS each), made on first use and
    shared by the replays of the prior (its copies by dataclasses.replace). parts: (fixed, scaled,
    configuration per row) where each configuration's scale of the scaled part is fitted (adapt),
    scales those per row (1 at first); timing_noise: each measurement's own noise variance (0 unknown)."""
    mean: np.ndarray
    cov: np.ndarray
    observed: dict
    drawn: dict = field(default_factory=dict, repr=False, compare=False)
    parts: tuple = field(default=(), repr=False, compare=False)
    scales: np.ndarray | None = field(default=None, repr=False, compare=False)
    timing_noise: dict = field(default_factory=dict, repr=False, compare=False)
    _last: tuple = field(default=(), init=False, repr=False, compare=False)
    _kept_factor: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.parts and self.scales is None:
            self.scales = np.ones(len(self.mean))

    @classmethod
    def of(cls, log_predicted: np.ndarray, correction: np.ndarray, cov: np.ndarray) -> Belief:
        return cls(log_predicted + correction, cov, {})

    def observe(self, index: int, log_time: float, ci_rel: float | None = None) -> None:
        """A measured log time; its noise the run-to-run noise of a timing (TIMING_SPREAD), or
        the measurement's own (95% interval ci_rel) where that is wider."""
        own = float(own_variance(ci_rel))
        self.observed[index] = (log_time, max(own, TIMING_SPREAD ** 2))
        self.timing_noise[index] = own

    def unobserved(self) -> Belief:
        """A copy of this belief with nothing measured (the prior's draws still shared)."""
        return replace(self, observed={}, timing_noise={})

    def widened(self, factor: float) -> Belief:
        """A copy of this prior with the part each configuration scales times factor^2 (the
        whole covariance where it has no parts); a configuration's common error stays."""
        if not self.parts:
            return replace(self.unobserved(), cov=self.cov * factor ** 2, drawn={})
        fixed, scaled, blocks = self.parts
        scaled = scaled * factor ** 2
        return replace(self.unobserved(), cov=fixed + np.outer(self.scales, self.scales) * scaled,
                       parts=(fixed, scaled, blocks), drawn={})

    def adapt(self, index: int) -> None:
        """Where the covariance has parts (fixed, scaled, configuration per row), refit the
        scale of the scaled part and the timing noise floor of index's configuration to its
        measurements (learn/adapt): cov = fixed + (s s^T) * scaled, s each row's scale."""
        if not self.parts:
            return
        fixed, scaled, blocks = self.parts
        mine = np.array([i for i in self.observed if blocks[i] == blocks[index]], int)
        if len(mine) < ADAPT_FROM:
            return
        values = np.array([self.observed[i][0] for i in mine])
        own = np.array([self.timing_noise[i] for i in mine])
        scale, floor = fitted_scales(fixed[np.ix_(mine, mine)], scaled[np.ix_(mine, mine)],
                                     values - self.mean[mine], own)
        for i, noise in zip(mine, own):
            self.observed[i] = (self.observed[i][0], max(noise, (floor * TIMING_SPREAD) ** 2))
        rows = blocks == blocks[index]
        if np.any(self.scales[rows] != scale):
            self.scales = np.where(rows, scale, self.scales)
            self.cov = fixed + np.outer(self.scales, self.scales) * scaled
            self._kept_factor = ()
            self._last = ()

    def _conditioned(self, among) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of these candidates: the posterior mean, their covariance with the observed and its
        product with the observed covariance's inverse (what the observations take away)."""
        seen, values, _, root = self._factor()
        k_ao = self.cov[np.ix_(among, seen)]
        weights = cho_solve((root, True), np.column_stack([values - self.mean[seen], k_ao.T]),
                            check_finite=False)
        return self.mean[among] + k_ao @ weights[:, 0], k_ao, weights[:, 1:]

    def _factor(self) -> tuple:
        """The observed candidates, their log times and noise variances, and the lower Cholesky
        factor of their covariance plus noise (kept until the observations change)."""
        state = tuple(self.observed.items())
        if self._kept_factor and self._kept_factor[0] == state:
            return self._kept_factor[1]
        seen = np.fromiter(self.observed, int)
        values, noise = np.array(list(self.observed.values())).T
        k_oo = self.cov[np.ix_(seen, seen)] + np.diag(noise)
        found = seen, values, noise, cholesky(k_oo, lower=True, check_finite=False)
        self._kept_factor = (state, found)
        return found

    def joint(self, among) -> tuple[np.ndarray, np.ndarray]:
        """Mean and covariance of these candidates' log times given the observations."""
        among = np.asarray(among)
        if not self.observed:
            return self.mean[among], self.cov[np.ix_(among, among)]
        mean, k_ao, taken = self._conditioned(among)
        return mean, self.cov[np.ix_(among, among)] - k_ao @ taken

    def chance_any(self, held, among, free) -> float:
        """P(some candidate among these where free is true is BETTER_BY faster than every one
        where held is true): from DRAWS joint draws, so that what the candidates' errors share
        counts once (drawn the same for the same observations, live and replayed)."""
        among = np.asarray(among)
        free, held = np.asarray(free, bool), np.asarray(held, bool)
        if not free.any() or not held.any():
            return float(free.any())
        draws = self.draws(among)
        fastest_held = draws[held].min(axis=0) + math.log(1 - BETTER_BY)
        return float(np.mean(draws[free].min(axis=0) < fastest_held))

    def draws(self, among) -> np.ndarray:
        """DRAWS joint draws of these candidates' log times given the observations (a row
        each), the same for the same observations."""
        among = np.asarray(among)
        mean, _ = self.posterior()
        return mean[among, None] + self._posterior_draws(among)

    def _posterior_draws(self, among: np.ndarray) -> np.ndarray:
        """DRAWS joint draws of these candidates' log times given the observations, less their
        mean: the prior's draws conditioned on the observed ones plus drawn noise (Matheron's
        rule), a solve over the observed instead of a root of the candidates' covariance."""
        prior, noise = self._prior_draws()
        if not self.observed:
            return prior[among]
        seen, _, variance, root = self._factor()
        weights = cho_solve((root, True), prior[seen] + np.sqrt(variance)[:, None] * noise[seen],
                            check_finite=False)
        return prior[among] - self.cov[np.ix_(among, seen)] @ weights

    def _prior_draws(self) -> tuple[np.ndarray, np.ndarray]:
        """DRAWS centred joint draws of every candidate's log time under the prior, and standard
        normal draws of each one's observation noise (made once per prior covariance)."""
        if self.parts:
            roots = self.drawn.get("parts")
            if roots is None or roots[0] is not self.parts:
                normal = np.random.default_rng(DRAWS_SEED).standard_normal(
                    (3, len(self.mean), DRAWS))
                roots = (self.parts, _root(self.parts[0]) @ normal[0],
                         _root(self.parts[1]) @ normal[2], normal[1])
                self.drawn["parts"] = roots
            return roots[1] + self.scales[:, None] * roots[2], roots[3]
        kept = self.drawn.get("prior")
        if kept is None or kept[0] is not self.cov:
            normal = np.random.default_rng(DRAWS_SEED).standard_normal((2, len(self.mean), DRAWS))
            kept = (self.cov, _root(self.cov) @ normal[0], normal[1])
            self.drawn["prior"] = kept
        return kept[1], kept[2]

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of every candidate's log time given the observations
        (kept until they change)."""
        state = tuple(self.observed.items())
        if self._last and self._last[0] == state:
            return self._last[1]
        if not self.observed:
            found = self.mean, np.sqrt(np.clip(np.diag(self.cov), 1e-12, None))
        else:
            mean, k_ao, taken = self._conditioned(np.arange(len(self.mean)))
            var = np.diag(self.cov) - np.einsum("ij,ji->i", k_ao, taken)
            found = mean, np.sqrt(np.clip(var, 1e-12, None))
        self._last = (state, found)
        return found

    def covariance(self, rows, columns) -> np.ndarray:
        """The posterior covariance of these rows' log times with these columns'."""
        rows, columns = np.asarray(rows), np.asarray(columns)
        if not self.observed:
            return self.cov[np.ix_(rows, columns)]
        seen, _, _, root = self._factor()
        left = cho_solve((root, True), self.cov[np.ix_(seen, rows)], check_finite=False)
        return self.cov[np.ix_(rows, columns)] - left.T @ self.cov[np.ix_(seen, columns)]

    def held_best(self, among) -> int | None:
        """The measured candidate among these of least posterior mean: the best held."""
        mean, _ = self.posterior()
        held = [int(i) for i in among if int(i) in self.observed]
        return min(held, key=lambda i: mean[i]) if held else None

    def chances(self, best: int, among=None) -> np.ndarray:
        """P(t_v < t_best * (1 - BETTER_BY)) per candidate among these (all by default; 0 where
        measured), best the best held (its own uncertainty counts). Normal tails: the offline
        model's errors within a pool are light-tailed (kurtosis -0.5 on the shipped ground
        truth)."""
        mean, std = self.posterior()
        among = np.arange(len(mean)) if among is None else np.asarray(among)
        gap = mean[best] + math.log(1 - BETTER_BY) - mean[among]
        out = ndtr(gap / np.hypot(std[among], std[best]))
        out[[position for position, i in enumerate(among) if i in self.observed]] = 0.0
        return out

    def next_pick(self, best_log: float | None, busy=(), among=None) -> int | None:
        """The unmeasured candidate among these (all by default), not busy, with the largest
        expected improvement of log time over the best measured; before any measurement the one
        of least expected time."""
        mean, std = self.posterior()
        skip = set(self.observed) | set(busy)
        free = [int(i) for i in (range(len(mean)) if among is None else among) if i not in skip]
        if not free:
            return None
        if best_log is None:
            return min(free, key=lambda i: mean[i])
        gain = best_log - mean[free]
        z = gain / std[free]
        improvement = gain * ndtr(z) + std[free] * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        return free[int(np.argmax(improvement))]


def _root(cov: np.ndarray) -> np.ndarray:
    """A square root of a covariance: its Cholesky factor (a tenth of an eigendecomposition's
    cost), by its eigenvectors where rounding left it not quite positive definite."""
    cov = (cov + cov.T) / 2
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(cov)
        return vectors * np.sqrt(np.clip(values, 0, None))


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
