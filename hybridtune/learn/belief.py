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
from hybridtune.learn.timing import TIMING_SPREAD, own_variance

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
