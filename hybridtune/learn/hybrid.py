"""The hybrid strategy's belief over one configuration's variants: a joint Gaussian on log time, conditioned on each measurement, choosing by expected improvement and stopping when no variant is likely to beat the best."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr
from sklearn.gaussian_process.kernels import ConstantKernel, Matern
from sklearn.preprocessing import StandardScaler

from hybridtune.learn.encode import encoding_for
from hybridtune.learn.table import Z95
from hybridtune.learn.train import pool_offsets

DEFAULT_SPREAD = 0.5     # prior standard deviation of log(measured / predicted) without a model
DEFAULT_LENGTH = 3.0     # and its length scale on standardised features
DEFAULT_NOISE = 0.01     # white noise (variance) of a measured log time
MIN_IMPROVEMENT = 0.01   # a variant counts as better only by max(ci_rel, this)
MIN_NOISE = 1e-6         # variance of a measured log time at least


@dataclass
class Belief:
    """log time ~ N(mean, cov) over the candidates before any measurement; observe() conditions."""
    mean: np.ndarray
    cov: np.ndarray
    noise: float
    observed: dict

    @classmethod
    def of(cls, log_predicted: np.ndarray, correction: np.ndarray, cov: np.ndarray,
           noise: float) -> Belief:
        return cls(log_predicted + correction, cov, noise, {})

    def observe(self, index: int, log_time: float, ci_rel: float | None = None) -> None:
        """A measured log time; its noise is the measurement's own (95% interval ci_rel) where
        known, else the belief's."""
        known = ci_rel is not None and math.isfinite(ci_rel) and ci_rel > 0
        self.observed[index] = (log_time, max((ci_rel / Z95) ** 2, MIN_NOISE) if known
                                else self.noise)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of every candidate's log time given the observations."""
        if not self.observed:
            return self.mean, np.sqrt(np.clip(np.diag(self.cov), 1e-12, None))
        seen = np.fromiter(self.observed, int)
        values, noise = np.array(list(self.observed.values())).T
        k_oo = self.cov[np.ix_(seen, seen)] + np.diag(noise)
        k_ao = self.cov[:, seen]
        weights = np.linalg.solve(k_oo, np.column_stack([values - self.mean[seen], k_ao.T]))
        mean = self.mean + k_ao @ weights[:, 0]
        var = np.diag(self.cov) - np.einsum("ij,ji->i", k_ao, weights[:, 1:])
        return mean, np.sqrt(np.clip(var, 1e-12, None))

    def chances(self, best_log: float, ci_rel: float, among=None) -> np.ndarray:
        """P(t_v < t_best * (1 - max(ci_rel, MIN_IMPROVEMENT))) per candidate among these (all by
        default; 0 where measured)."""
        mean, std = self.posterior()
        among = np.arange(len(mean)) if among is None else np.asarray(among)
        threshold = best_log + math.log(1 - max(ci_rel, MIN_IMPROVEMENT))
        out = ndtr((threshold - mean[among]) / std[among])
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


def across_configurations(across: tuple, configurations) -> np.ndarray:
    """The correlation of a model's errors between the candidates' configurations ((n, threads)
    per candidate, all of one method and IVP): exp(-a |log n/n'| - b |log t/t'|) for across =
    (a, b); 1 within a configuration, 0 between configurations where across is empty."""
    sizes = np.log(np.array([(n, threads) for n, threads in configurations], float))
    distance = np.abs(sizes[:, None, :] - sizes[None, :, :])
    if not across:
        return np.all(distance == 0, axis=2).astype(float)
    rates = np.broadcast_to(np.asarray(across, float), distance.shape)
    scaled = np.multiply(rates, distance, out=np.zeros_like(distance), where=distance > 0)
    return np.exp(-scaled.sum(axis=2))


def prior_belief(fitted, variants, feature_rows, predicted_s, configurations=None
                 ) -> tuple[Belief, str]:
    """The belief before measuring the candidates (of one configuration, or with configurations,
    (n, threads) per candidate, of several of one method and IVP): a trained Gaussian process's
    correction and covariance, else the offline model itself with DEFAULT_SPREAD and a default
    kernel over the variants' features."""
    log_predicted = np.log(np.asarray(predicted_s, float))
    if configurations is None:
        configurations = [(1, 1)] * len(log_predicted)
    across = fitted.across if fitted is not None and fitted.kind == "gp" else ()
    together = across_configurations(across, configurations)
    if fitted is not None and fitted.kind == "gp":
        X = fitted.encoding.matrix(variants, feature_rows)
        mean, cov = fitted.estimator.predict_joint(X)
        mean = mean + fitted.levels.of(feature_rows) - pool_offsets(feature_rows)
        # what the model gets wrong on a new IVP: a common error of the configuration (learnt
        # from its first measurement) and each variant's, partly shared with similar variants,
        # and partly shared with the same variants in the IVP's other configurations
        shared, own = fitted.error_covariance
        same = np.asarray(variants)[:, None] == np.asarray(variants)[None, :]
        cov = cov + together * (fitted.offset_spread ** 2 + shared * fitted.estimator.correlation(X)
                                + own * same)
        return Belief.of(log_predicted, mean, cov, fitted.estimator.noise_level_), \
            (f"prior: the trained Gaussian process ({len(fitted.row_ids)} training rows), with "
             f"the errors it made on left-out IVPs: {fitted.offset_spread:.3f} common to a "
             f"configuration, {fitted.variant_spread:.3f} of a variant's own (log time), "
             f"partly shared with similar variants{_across_note(across)}")
    X = encoding_for(variants, feature_rows).matrix(variants, feature_rows)
    kernel = ConstantKernel(DEFAULT_SPREAD ** 2) * Matern(DEFAULT_LENGTH, nu=2.5)
    cov = together * kernel(StandardScaler().fit_transform(X))
    return Belief.of(log_predicted, np.zeros(len(X)), cov, DEFAULT_NOISE), \
        (f"prior: no trained model for this hardware; the offline model itself with a spread of "
         f"{DEFAULT_SPREAD} in log time")


def _across_note(across: tuple) -> str:
    if not across or not math.isfinite(across[0]):
        return ""
    return (f", and correlated {math.exp(-across[0] * math.log(10)):.2f} with the same variant "
            "at a tenfold size of the same IVP")
