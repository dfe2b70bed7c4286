"""Amdahl's and Gustafson's laws fitted to speedup curves: the serial fractions, strong and weak.

Strong scaling: S(p) = 1 / (f + (1 - f) / p); weak scaling, the scaled speedup: S(p) = p - f (p -
1); each by least squares on the form linear in f.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hybridtune.errors import HybridtuneError


@dataclass(frozen=True)
class SerialFraction:
    """The fitted serial fraction f of one law, the largest speedup it allows (Amdahl: 1 / f;
    Gustafson: none, inf) and the fit's relative RMS error on the speedups."""
    law: str
    fraction: float
    limit: float
    rms_rel_error: float
    points: int

    def speedup(self, ranks: float) -> float:
        if self.law == "amdahl":
            return 1.0 / (self.fraction + (1.0 - self.fraction) / ranks)
        return ranks - self.fraction * (ranks - 1.0)


def _checked(points, what: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = sorted((float(p), float(s)) for p, s in points)
    if any(not (p >= 1 and math.isfinite(p) and s > 0 and math.isfinite(s)) for p, s in pairs):
        raise HybridtuneError(f"{what} needs rank counts >= 1 and positive finite speedups, got "
                              f"{pairs!r}")
    if len({p for p, _ in pairs if p > 1}) < 2:
        raise HybridtuneError(f"{what} needs speedups at at least 2 rank counts above 1, got "
                              f"{pairs!r}")
    return np.array([p for p, _ in pairs]), np.array([s for _, s in pairs])


def _fraction(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares f of y = f x (a line through the origin), kept within [0, 1]."""
    return float(min(max(np.dot(x, y) / np.dot(x, x), 0.0), 1.0))


def _fit(law: str, p: np.ndarray, s: np.ndarray, fraction: float) -> SerialFraction:
    fit = SerialFraction(law, fraction, 1.0 / fraction if law == "amdahl" and fraction > 0
                         else math.inf, 0.0, len(p))
    errors = np.array([fit.speedup(x) / y - 1 for x, y in zip(p, s)])
    return SerialFraction(law, fraction, fit.limit, float(np.sqrt(np.mean(errors ** 2))), len(p))


def amdahl(points) -> SerialFraction:
    """Amdahl's serial fraction from (ranks, speedup over one rank) of strong scaling: 1 / S -
    1 / p = f (1 - 1 / p)."""
    p, s = _checked(points, "Amdahl's law")
    return _fit("amdahl", p, s, _fraction(1 - 1 / p, 1 / s - 1 / p))


def gustafson(points) -> SerialFraction:
    """Gustafson's serial fraction from (ranks, scaled speedup) of weak scaling, the scaled
    speedup being p T(1, n) / T(p, p n): p - S = f (p - 1)."""
    p, s = _checked(points, "Gustafson's law")
    return _fit("gustafson", p, s, _fraction(p - 1, p - s))
