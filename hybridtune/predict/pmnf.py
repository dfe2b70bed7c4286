"""Empirical scaling models in Extra-P's performance model normal form: f(x) = c0 + c1 * x^i * log2(x)^j over one parameter (ranks, or n), the term chosen among Extra-P's exponent sets by leave-one-out cross-validation (SMAPE)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from hybridtune.errors import HybridtuneError

# Extra-P's single-parameter exponent sets: polynomial exponents i, logarithm exponents j
POLYNOMIAL = (0, Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(3, 4),
              Fraction(4, 5), 1, Fraction(5, 4), Fraction(4, 3), Fraction(3, 2), Fraction(5, 3),
              Fraction(7, 4), 2, Fraction(9, 4), Fraction(7, 3), Fraction(5, 2), Fraction(8, 3),
              Fraction(11, 4), 3)
LOGARITHMIC = (0, 1, 2)
MIN_POINTS = 5           # Extra-P's minimum for a single-parameter model


@dataclass(frozen=True)
class Term:
    """x^i * log2(x)^j."""
    i: Fraction
    j: int

    def values(self, x: np.ndarray) -> np.ndarray:
        return np.power(x, float(self.i)) * np.power(np.log2(x), self.j)

    def text(self, parameter: str) -> str:
        """'p^(1/2) * log2(p)', 'p^-1', 'log2(p)^2': an exponent 1 left out, a fraction in
        parentheses; the names PMNFModel.leading and the Extra-P adapter compare."""
        def power(base: str, exponent) -> str:
            exponent = Fraction(exponent)
            shown = str(exponent) if exponent.denominator == 1 else f"({exponent})"
            return base if exponent == 1 else f"{base}^{shown}"
        parts = [power(parameter, self.i)] if self.i else []
        if self.j:
            parts.append(power(f"log2({parameter})", self.j))   # Extra-P's negative j too
        return " * ".join(parts)


@dataclass(frozen=True)
class PMNFModel:
    """c0 + c1 * term (term None: a constant), with its leave-one-out SMAPE (the error it makes on
    a point it was not fitted to, in percent), residual sum of squares and adjusted R^2."""
    constant: float
    coefficient: float
    term: Term | None
    smape_cv: float
    rss: float
    adjusted_r2: float
    points: int

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        if self.term is None:
            return np.full_like(x, self.constant)
        return self.constant + self.coefficient * self.term.values(x)

    def text(self, parameter: str = "p") -> str:
        if self.term is None or not self.term.text(parameter):
            return f"{self.constant:.4g}"
        sign = "-" if self.coefficient < 0 else "+"
        return f"{self.constant:.4g} {sign} {abs(self.coefficient):.4g} * {self.term.text(parameter)}"

    @property
    def leading(self) -> str:
        """The growing (or, with a negative exponent, shrinking) term in `p`, or 'constant'."""
        return "constant" if self.term is None else self.term.text("p")


def hypotheses(negative: bool = False) -> list[Term]:
    """Every term of the exponent sets but the constant; with negative, 1/x-like terms too."""
    signs = (1, -1) if negative else (1,)
    return [Term(Fraction(sign) * Fraction(i), j) for i in POLYNOMIAL for j in LOGARITHMIC
            for sign in signs if (i, j) != (0, 0) and not (sign < 0 and i == 0)]


def _smape(predicted: np.ndarray, measured: np.ndarray) -> float:
    scale = np.abs(predicted) + np.abs(measured)
    return float(100 * np.mean(np.where(scale > 0, 2 * np.abs(predicted - measured) / scale, 0)))


def _fit(x: np.ndarray, y: np.ndarray, term: Term | None) -> tuple[float, float]:
    if term is None:
        return float(np.mean(y)), 0.0
    design = np.column_stack([np.ones_like(x), term.values(x)])
    (c0, c1), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(c0), float(c1)


def _cross_validated(x: np.ndarray, y: np.ndarray, term: Term | None) -> float:
    """Leave-one-out SMAPE of the hypothesis."""
    predicted = np.empty_like(y)
    for k in range(len(x)):
        keep = np.arange(len(x)) != k
        c0, c1 = _fit(x[keep], y[keep], term)
        predicted[k] = c0 + (c1 * term.values(x[k:k + 1])[0] if term is not None else 0.0)
    return _smape(predicted, y)


def fit_pmnf(points, negative: bool = False) -> PMNFModel:
    """The PMNF model of (x, y) points, x > 0 distinct, at least MIN_POINTS: the constant and
    every hypothesis fitted by least squares, the one with the smallest leave-one-out SMAPE
    chosen (the simpler on a tie); negative allows negative exponents (strong scaling)."""
    pairs = sorted((float(x), float(y)) for x, y in points)
    if len(pairs) < MIN_POINTS:
        raise HybridtuneError(f"a PMNF model needs at least {MIN_POINTS} points, got {len(pairs)}")
    if len({x for x, _ in pairs}) != len(pairs) or any(
            not (x > 0 and math.isfinite(x) and math.isfinite(y)) for x, y in pairs):
        raise HybridtuneError(f"a PMNF model needs distinct positive finite x and finite y, got "
                              f"{pairs!r}")
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])
    candidates: list[Term | None] = [None] + [t for t in hypotheses(negative)
                                              if np.all(np.isfinite(t.values(x)))]
    scored = [(_cross_validated(x, y, term), index, term)
              for index, term in enumerate(candidates)]
    error, _, term = min(scored, key=lambda s: (round(s[0], 9), s[1]))
    c0, c1 = _fit(x, y, term)
    residuals = y - (c0 + (c1 * term.values(x) if term is not None else 0.0))
    rss = float(np.sum(residuals ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    parameters = 1 if term is None else 2
    r2 = 1 - rss / total if total > 0 else 1.0
    adjusted = 1 - (1 - r2) * (len(y) - 1) / max(len(y) - parameters, 1)
    return PMNFModel(c0, c1, term, error, rss, adjusted, len(y))
