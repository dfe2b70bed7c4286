"""Corrected predictions: the offline time times exp(the learned correction), with a 95% interval.

The interval comes from the correction's standard deviation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hybridtune.learn.table import Z95

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


def corrected_times(fitted: Fitted, frame: pd.DataFrame) -> list[Corrected]:
    """Per row of frame (variant, predicted_s, features) its corrected time and interval."""
    if frame.empty:
        return []
    mean, std = fitted.correction(frame["variant"].tolist(), frame["features"].tolist())
    predicted = frame["predicted_s"].to_numpy(float)
    centre = predicted * np.exp(mean)
    return [Corrected(v, float(p), float(c), float(c * np.exp(-Z95 * s)), float(c * np.exp(Z95 * s)),
                      float(s))
            for v, p, c, s in zip(frame["variant"], predicted, centre, std)]
