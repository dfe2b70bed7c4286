"""PMNF models as Extra-P fits them: on data of known terms the leading term is recovered (with negative exponents for strong scaling), noise of a few percent mostly keeps it and the extrapolation close, and too few or bad points are refused."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict.pmnf import MIN_POINTS, Term, fit_pmnf, hypotheses

RANKS = [1, 2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("i, j", [(Fraction(1, 2), 1), (1, 0), (Fraction(1, 3), 0), (0, 1),
                                  (2, 0), (1, 1)])
def test_the_term_of_exact_data_is_recovered(i, j):
    term = Term(Fraction(i), j)
    model = fit_pmnf([(p, 3.0 + 0.5 * term.values(np.array([float(p)]))[0]) for p in RANKS])
    assert model.term == term
    assert model.constant == pytest.approx(3.0) and model.coefficient == pytest.approx(0.5)
    assert model.smape_cv < 1e-6 and model.adjusted_r2 == pytest.approx(1.0)


def test_strong_scaling_needs_negative_exponents_and_gets_them():
    points = [(p, 0.07 + 1.9 / p) for p in RANKS]
    assert fit_pmnf(points, negative=True).term == Term(Fraction(-1), 0)
    assert fit_pmnf(points, negative=True).text() == "0.07 + 1.9 * p^-1"
    assert fit_pmnf(points).term != Term(Fraction(-1), 0)      # Extra-P's default cannot say it


def test_a_few_percent_of_noise_keeps_the_leading_term():
    rng = np.random.default_rng(3)
    found, at_128 = [], []
    for _ in range(20):
        points = [(p, (1.0 + 0.2 * p * np.log2(p)) * rng.normal(1, 0.02)) for p in RANKS]
        model = fit_pmnf(points)
        found.append(model.leading)
        at_128.append(model([128.0])[0] / (1.0 + 0.2 * 128 * 7) - 1)
    # the misses take a term that grows alike over 1..64 (p^(2/3) log2(p)^2)
    assert found.count("p * log2(p)") >= 14
    assert max(abs(e) for e in at_128) < 0.15        # extrapolated to twice the largest p


def test_constant_data_is_a_constant():
    model = fit_pmnf([(p, 2.5) for p in RANKS])
    assert model.term is None and model.text() == "2.5" and model.leading == "constant"
    np.testing.assert_allclose(model([3, 100]), [2.5, 2.5])


def test_too_few_or_bad_points_are_refused_naming_the_minimum():
    with pytest.raises(HybridtuneError, match=f"at least {MIN_POINTS} points, got 4"):
        fit_pmnf([(p, 1.0) for p in (1, 2, 4, 8)])
    with pytest.raises(HybridtuneError, match="distinct positive"):
        fit_pmnf([(p, 1.0) for p in (0, 2, 4, 8, 16)])
    with pytest.raises(HybridtuneError, match="distinct positive"):
        fit_pmnf([(p, 1.0) for p in (2, 2, 4, 8, 16)])


def test_the_hypotheses_are_extra_ps_exponent_sets():
    plain = hypotheses()
    assert len(plain) == 20 * 3 - 1 and Term(Fraction(11, 4), 2) in plain
    assert len(hypotheses(negative=True)) == len(plain) + 19 * 3
    assert Term(Fraction(1, 2), 1).text("n") == "n^(1/2) * log2(n)"
