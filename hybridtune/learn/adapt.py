"""A configuration's own error scales, fitted to its measurements.

How far a trained model's variant errors and the timing noise run there, against what the training
IVPs showed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from hybridtune.learn.timing import TIMING_SPREAD

ADAPT_FROM = 8           # measurements of a configuration before its scales are fitted
# the factor on the model's variant errors (log-normal prior about 1, sd 1 in log), taken at this
# quantile of its posterior: a configuration whose variants the model ranks badly or that differ
# little is told apart by the measured residuals, and an upper quantile keeps a few lucky ones
# from ending a search early
SCALES = np.exp(np.linspace(math.log(0.05), math.log(3.0), 41))
SCALE_QUANTILE = 0.8
# the factor on the run-to-run noise floor of a timing (TIMING_SPREAD): only ever lowered, where
# the residuals are quieter than the floor (a compute-bound IVP whose variants agree to 0.5%)
FLOORS = np.exp(np.linspace(math.log(0.1), 0.0, 6))
PRIOR_SPREAD = 1.0       # sd of either factor's log under its prior


def fitted_scales(fixed: np.ndarray, scaled: np.ndarray, residual: np.ndarray,
                  timing_noise: np.ndarray) -> tuple[float, float]:
    """(scale, floor) for a configuration's measured rows, their log times' residuals about the
    prior mean and their timings' own noise variances, under cov = fixed + scale^2 scaled +
    diag(max(timing noise, (floor TIMING_SPREAD)^2)): the floor of the most probable pair and
    the scale at SCALE_QUANTILE of its posterior at that floor."""
    best = (-math.inf, 1.0, 1.0)
    for floor in FLOORS:
        noise = np.maximum(timing_noise, (floor * TIMING_SPREAD) ** 2)
        root = cholesky(fixed + np.diag(noise), lower=True, check_finite=False)
        whitened = solve_triangular(root, solve_triangular(root, scaled, lower=True,
                                                           check_finite=False).T,
                                    lower=True, check_finite=False)
        eig, vectors = np.linalg.eigh((whitened + whitened.T) / 2)
        eig = np.clip(eig, 0.0, None)
        z = vectors.T @ solve_triangular(root, residual, lower=True, check_finite=False)
        grid = SCALES[:, None] ** 2
        score = (-0.5 * np.sum(z ** 2 / (1 + grid * eig) + np.log1p(grid * eig), axis=1)
                 - np.log(np.diag(root)).sum()
                 - 0.5 * (np.log(SCALES) / PRIOR_SPREAD) ** 2
                 - 0.5 * (math.log(floor) / PRIOR_SPREAD) ** 2)
        top = float(score.max())
        if top > best[0]:
            chance = np.cumsum(np.exp(score - top))
            scale = float(SCALES[int(np.searchsorted(chance / chance[-1], SCALE_QUANTILE))])
            best = (top, scale, float(floor))
    return best[1], best[2]
