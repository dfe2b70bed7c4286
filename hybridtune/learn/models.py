"""Correction models with the scikit-learn estimator contract.

Each predicts log(measured / predicted) from scaled features, with a standard deviation.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted, validate_data


SCALE_FLOOR = 1e-3      # a feature's scale is at least this share of its mean's size (or of 1)


def floored_scaler(X) -> StandardScaler:
    """A StandardScaler fitted to X whose scales are at least SCALE_FLOOR x max(|mean|, 1): a
    feature all but constant in training (every log n within 1%, say) would otherwise put a row
    just outside that range hundreds of deviations away."""
    scaler = StandardScaler().fit(X)
    scaler.scale_ = np.maximum(scaler.scale_, SCALE_FLOOR * np.maximum(np.abs(scaler.mean_), 1.0))
    return scaler


class LinearCorrection(RegressorMixin, BaseEstimator):
    """Ridge regression on standardised features (floored_scaler); its spread is the residuals'
    standard deviation."""

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        self.scaler_ = floored_scaler(X)
        self.ridge_ = Ridge(alpha=self.alpha).fit(self.scaler_.transform(X), y)
        residuals = y - self.ridge_.predict(self.scaler_.transform(X))
        dof = max(len(y) - 1, 1)
        self.residual_std_ = float(np.sqrt(np.sum(residuals ** 2) / dof))
        return self

    def predict(self, X, return_std: bool = False):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        mean = self.ridge_.predict(self.scaler_.transform(X))
        if return_std:
            return mean, np.full(len(mean), self.residual_std_)
        return mean


class GPCorrection(RegressorMixin, BaseEstimator):
    """A Gaussian process, constant times Matern plus white noise, on standardised features.

    Hyperparameters are fitted by maximum likelihood unless optimize is False; then the kernel is
    the one given by constant, length_scale and noise_level (how a stored model is rebuilt).
    """

    def __init__(self, nu: float = 2.5, length_scale: float = 3.0, constant: float = 0.1,
                 noise_level: float = 0.01, optimize: bool = True, n_restarts: int = 0,
                 random_state: int = 0):
        self.nu = nu
        self.length_scale = length_scale
        self.constant = constant
        self.noise_level = noise_level
        self.optimize = optimize
        self.n_restarts = n_restarts
        self.random_state = random_state

    def _kernel(self):
        def bounds(low, high):
            return (low, high) if self.optimize else "fixed"
        return (ConstantKernel(self.constant, bounds(1e-4, 1e3))
                * Matern(self.length_scale, bounds(1e-2, 1e3), nu=self.nu)
                + WhiteKernel(self.noise_level, bounds(1e-6, 1.0)))

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        self.scaler_ = floored_scaler(X)
        self.y_mean_ = float(np.mean(y))
        self.gp_ = GaussianProcessRegressor(
            self._kernel(), optimizer="fmin_l_bfgs_b" if self.optimize else None,
            n_restarts_optimizer=self.n_restarts, random_state=self.random_state,
            copy_X_train=False)
        with warnings.catch_warnings():     # a hyperparameter at its bound is kept, not an error
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.gp_.fit(self.scaler_.transform(X), y - self.y_mean_)
        kernel = self.gp_.kernel_
        self.constant_ = float(kernel.k1.k1.constant_value)
        self.length_scale_ = float(kernel.k1.k2.length_scale)
        self.noise_level_ = float(kernel.k2.noise_level)
        return self

    def predict(self, X, return_std: bool = False):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if return_std:
            mean, std = self.gp_.predict(self.scaler_.transform(X), return_std=True)
            return mean + self.y_mean_, std
        return self.gp_.predict(self.scaler_.transform(X)) + self.y_mean_

    def correlation(self, X) -> np.ndarray:
        """The Matern correlation between the rows of X (the fitted length scale, no constant)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.gp_.kernel_.k1.k2(self.scaler_.transform(X))

    def predict_joint(self, X):
        """Mean and covariance of the latent correction at X (no white noise), for conditioning
        on new measurements of some of these rows."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        scaled = self.scaler_.transform(X)
        mean, cov = self.gp_.predict(scaled, return_cov=True)
        cov = cov - self.noise_level_ * np.eye(len(X))  # return_cov includes the white kernel
        return mean + self.y_mean_, cov
