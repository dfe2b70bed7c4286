"""Corrected predictions: the offline time times exp(the learned correction), with a 95% interval.

The interval comes from the correction's standard deviation. Where the row was measured (its
variant at its configuration, on this hardware), the correction is conditioned on that
measurement as hybrid's belief is: its noise the run-to-run spread of a timing or its own
interval where wider.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hybridtune.learn.table import Z95
from hybridtune.learn.timing import TIMING_SPREAD, own_variance

if TYPE_CHECKING:   # not imported at run time: unpickling a Corrected needs no scikit-learn
    from hybridtune.learn.train import Fitted


@dataclass(frozen=True)
class Corrected:
    variant: str
    predicted_s: float
    corrected_s: float
    low_s: float
    high_s: float
    std_log: float              # standard deviation of log(time)
    measured_s: float | None = None   # the row's own measured time, where it has one


def corrected_times(fitted: Fitted, frame: pd.DataFrame) -> list[Corrected]:
    """Per row of frame (variant, predicted_s, features; median_s and ci_rel where measured) its
    corrected time and interval."""
    if frame.empty:
        return []
    mean, std = fitted.correction(frame["variant"].tolist(), frame["features"].tolist())
    predicted = frame["predicted_s"].to_numpy(float)
    unmeasured = pd.Series(np.nan, index=frame.index)
    measured = frame.get("median_s", unmeasured).to_numpy(float)
    mean, std = measured_here(mean, std, np.log(measured / predicted),
                              frame.get("ci_rel", unmeasured).to_numpy(float))
    centre = predicted * np.exp(mean)
    return [Corrected(v, float(p), float(c), float(c * np.exp(-Z95 * s)), float(c * np.exp(Z95 * s)),
                      float(s), float(t) if np.isfinite(t) else None)
            for v, p, c, s, t in zip(frame["variant"], predicted, centre, std, measured)]


def measured_here(mean: np.ndarray, std: np.ndarray, target: np.ndarray,
                  ci_rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The correction's mean and standard deviation (log) conditioned on each row's measured
    target (log measured / predicted; NaN where unmeasured), its noise the larger of
    TIMING_SPREAD and its own (from its 95% interval ci_rel; NaN: unknown), as hybrid's belief
    takes a measurement."""
    noise = np.maximum(own_variance(ci_rel), TIMING_SPREAD ** 2)
    prior = np.maximum(std, 1e-12) ** 2
    seen = np.isfinite(target)
    weight = np.where(seen, prior / (prior + noise), 0.0)
    return (mean + weight * np.where(seen, target - mean, 0.0),
            np.sqrt(np.where(seen, prior * noise / (prior + noise), prior)))
