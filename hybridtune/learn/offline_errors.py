"""How the offline model errs within measured pools: hybrid's prior where no model was trained.

Where no model was trained for the hardware, these errors calibrate hybrid's prior: how far the
offline ranking holds (a slope of measured on predicted log time, and its spread between pools), a
smooth error over the variants' features and each variant's own, fitted by marginal likelihood.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.linalg import cholesky, solve_triangular
from scipy.optimize import minimize
from scipy.spatial.distance import pdist, squareform
from sklearn.gaussian_process.kernels import Matern
from sklearn.preprocessing import StandardScaler

from hybridtune.learn.encode import encoding_for


@dataclass(frozen=True)
class OfflineErrors:
    """log t_v = level + slope' * (log p_v - mean log p) + f(x_v) + e_v within a configuration,
    slope' ~ N(slope, slope_spread^2), f ~ GP(0, shared^2 Matern(length)) over the standardised
    features, e_v ~ N(0, own^2); `pools` the measured pools it was fitted on."""
    slope: float
    slope_spread: float
    shared: float
    length: float
    own: float
    pools: int

    def as_dict(self) -> dict:
        return asdict(self)


def standardised(variants: list, feature_rows: list) -> np.ndarray:
    """The variants' encoded features, each column to mean 0 and variance 1."""
    return StandardScaler().fit_transform(
        encoding_for(variants, feature_rows).matrix(variants, feature_rows))


def similarity(variants: list, feature_rows: list, length: float) -> np.ndarray:
    """The Matern (nu 2.5) correlation of the variants' standardised features."""
    return Matern(length, nu=2.5)(standardised(variants, feature_rows))


def centred(log_predicted: np.ndarray) -> np.ndarray:
    return log_predicted - log_predicted.mean()


def slope_of(log_predicted: np.ndarray, log_measured: np.ndarray) -> float:
    """The least-squares slope of measured on predicted log time within one pool."""
    return float(np.polyfit(centred(log_predicted), log_measured - log_measured.mean(), 1)[0])


def calibrated(pools: list[pd.DataFrame], near: OfflineErrors | None = None) -> OfflineErrors:
    """Fitted on measured pools (each a frame of one configuration: variant, features,
    predicted_s, median_s, at least 3 rows): each pool's slope; their mean and spread; then the
    shared and own spreads and the length by the pools' summed marginal likelihood of what the
    slope leaves, searched from `near` (a fit on most of the same pools) where given."""
    pools = [p for p in pools if len(p) >= 3]
    if len(pools) < 2:
        raise ValueError(f"{len(pools)} measured pool(s) of 3 or more variants; calibrating "
                         "the offline model's errors needs 2")
    logs = [(np.log(p["predicted_s"].to_numpy(float)), np.log(p["median_s"].to_numpy(float)))
            for p in pools]
    slopes = [slope_of(lp, lt) for lp, lt in logs]
    left = [lt - lt.mean() - s * centred(lp) for (lp, lt), s in zip(logs, slopes)]
    distances = [_distances(p) for p in pools]

    def minus_log_likelihood(theta: np.ndarray) -> float:
        shared, length, own = np.exp(theta)
        total = 0.0
        for y, d in zip(left, distances):
            a = np.sqrt(5) * d / length
            k = shared ** 2 * (1 + a + a * a / 3) * np.exp(-a)
            k[np.diag_indices_from(k)] += own ** 2 + 1e-10
            root = cholesky(k, lower=True, check_finite=False)
            z = solve_triangular(root, y, lower=True, check_finite=False)
            total += 0.5 * z @ z + np.log(np.diag(root)).sum()
        return total

    start = [0.4, 20.0, 0.05] if near is None else [near.shared, near.length, near.own]
    found = minimize(minus_log_likelihood, np.log(start), method="Nelder-Mead",
                     options={"maxiter": 400, "xatol": 1e-3, "fatol": 1e-3})
    shared, length, own = (float(v) for v in np.exp(found.x))
    return OfflineErrors(float(np.mean(slopes)), float(np.std(slopes, ddof=1)), shared, length,
                         own, len(pools))


def _distances(pool: pd.DataFrame) -> np.ndarray:
    return squareform(pdist(standardised(pool["variant"].tolist(), pool["features"].tolist())))
