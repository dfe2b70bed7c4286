"""Empirical scaling models in Extra-P's performance model normal form, over one parameter.

f(x) = c0 + c1 * x^i * log2(x)^j over ranks or n, the term chosen among Extra-P 4.2.5's default
hypotheses by its rule: the smallest leave-one-out SMAPE, against the constant's SMAPE over all
points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from hybridtune.errors import HybridtuneError

# The hypotheses follow Extra-P 4.2.5's default single-parameter modeler
# (extrap/modelers/single_parameter/basic.py, SingleParameterModeler.create_default_building_blocks
# with allow_log_terms): each polynomial exponent i alone, and log2(x)^j (j = 1, 2) alone or times
# x^i for the exponents listed with it; 42 terms. With negative exponents (its
# allow_negative_exponents) every one of them mirrored, x^-i * log2(x)^-j: 84 in all.
POLYNOMIAL = tuple(Fraction(e) for e in ("1/4", "1/3", "1/2", "2/3", "3/4", "4/5", "1", "5/4",
                                         "4/3", "3/2", "5/3", "7/4", "2", "9/4", "7/3", "5/2",
                                         "8/3", "11/4", "3"))
TIMES_LOG = {1: tuple(Fraction(e) for e in ("0", "1/4", "1/3", "1/2", "2/3", "3/4", "1", "5/4",
                                            "4/3", "3/2", "2", "5/2", "3")),
             2: tuple(Fraction(e) for e in ("0", "1/4", "1/3", "1/2", "2/3", "3/4", "1", "3/2",
                                            "2", "5/2"))}
MIN_POINTS = 5           # Extra-P's minimum for a single-parameter model (it only warns below it)
# Extra-P's thresholds (abstract_base.py): a constant coefficient under this fraction of the
# smallest value is set to 0 in each leave-one-out fit; a term whose largest share of a measured
# value is under its minimum_term_contribution is not taken
CLEAN_CONSTANT = 0.0005
MIN_TERM_CONTRIBUTION = 0.0005


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
    """c0 + c1 * term (term None: a constant), with the SMAPE it was chosen by (in percent: for a
    term leave-one-out, the error it makes on a point it was not fitted to; for the constant over
    all points, as Extra-P), its residual sum of squares and adjusted R^2 over all points."""
    constant: float
    coefficient: float
    term: Term | None
    smape: float
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
    """Extra-P 4.2.5's default single-parameter hypotheses (the constant aside): 42 terms, 84 with
    negative (each mirrored, x^-i * log2(x)^-j, for strong scaling). Its order is not Extra-P's,
    which decides only between equal SMAPEs (the earlier kept)."""
    plain = [Term(i, 0) for i in POLYNOMIAL] + [Term(i, j) for j, exponents in TIMES_LOG.items()
                                                 for i in exponents]
    return plain + ([Term(-t.i, -t.j) for t in plain] if negative else [])


def _smape(predicted: np.ndarray, measured: np.ndarray) -> float:
    scale = np.abs(predicted) + np.abs(measured)
    return float(100 * np.mean(np.where(scale > 0, 2 * np.abs(predicted - measured)
                                        / np.where(scale > 0, scale, 1), 0)))


def _fit(x: np.ndarray, y: np.ndarray, term: Term | None) -> tuple[float, float]:
    if term is None:
        return float(np.mean(y)), 0.0
    design = np.column_stack([np.ones_like(x), term.values(x)])
    (c0, c1), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(c0), float(c1)


def _cross_validated(x: np.ndarray, y: np.ndarray, term: Term) -> tuple[float, float]:
    """Leave-one-out SMAPE and RSS of the hypothesis, each fit's constant set to 0 where under
    CLEAN_CONSTANT of the smallest value it was fitted to (Extra-P's clean_constant_coefficient)."""
    predicted = np.empty_like(y)
    for k in range(len(x)):
        keep = np.arange(len(x)) != k
        c0, c1 = _fit(x[keep], y[keep], term)
        smallest = float(np.min(y[keep]))
        if abs(c0 if smallest == 0 else c0 / smallest) < CLEAN_CONSTANT:
            c0 = 0.0
        predicted[k] = c0 + c1 * term.values(x[k:k + 1])[0]
    return _smape(predicted, y), float(np.sum((predicted - y) ** 2))


def _contributes(x: np.ndarray, y: np.ndarray, term: Term, c1: float) -> bool:
    """Whether the fitted term reaches MIN_TERM_CONTRIBUTION of some measured value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.max(np.abs(c1 * term.values(x) / y))
    return c1 != 0 and not share < MIN_TERM_CONTRIBUTION        # a NaN share passes, as there


def fit_pmnf(points, negative: bool = False) -> PMNFModel:
    """The PMNF model of (x, y) points, x > 0 distinct, at least MIN_POINTS, chosen as Extra-P
    4.2.5's default single-parameter modeler chooses (extrap/modelers/single_parameter/basic.py
    and abstract_base.py): the constant (the mean) if it fits exactly; else, starting from the
    constant and its SMAPE over all points, each hypothesis in turn replaces the best so far if its
    leave-one-out SMAPE is smaller and its term contributes (_contributes). Log terms are left
    out if a point has x < 1, or x <= 1 with negative (negative exponents, for strong scaling).
    The chosen one is fitted to all points by least squares."""
    pairs = sorted((float(x), float(y)) for x, y in points)
    if len(pairs) < MIN_POINTS:
        raise HybridtuneError(f"a PMNF model needs at least {MIN_POINTS} points, got {len(pairs)}")
    if len({x for x, _ in pairs}) != len(pairs) or any(
            not (x > 0 and math.isfinite(x) and math.isfinite(y)) for x, y in pairs):
        raise HybridtuneError(f"a PMNF model needs distinct positive finite x and finite y, got "
                              f"{pairs!r}")
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])
    total = float(np.sum((y - y.mean()) ** 2))
    term, error = None, _smape(np.full_like(y, y.mean()), y)
    if total > 0:
        logs = bool(np.all(x > 1) if negative else np.all(x >= 1))
        for candidate in hypotheses(negative):
            if (candidate.j and not logs) or not np.all(np.isfinite(candidate.values(x))):
                continue
            smape, rss = _cross_validated(x, y, candidate)
            if (math.isfinite(rss) and smape < error
                    and _contributes(x, y, candidate, _fit(x, y, candidate)[1])):
                term, error = candidate, smape
    c0, c1 = _fit(x, y, term)
    residuals = y - (c0 + (c1 * term.values(x) if term is not None else 0.0))
    rss = float(np.sum(residuals ** 2))
    parameters = 1 if term is None else 2
    r2 = 1 - rss / total if total > 0 else 1.0
    adjusted = 1 - (1 - r2) * (len(y) - 1) / max(len(y) - parameters, 1)
    return PMNFModel(c0, c1, term, error, rss, adjusted, len(y))
