"""PMNF models as Extra-P 4.2.5 fits them: its default hypotheses, and its rule for choosing among them; on data of known terms the leading term is recovered (with negative exponents for strong scaling), noise of a few percent mostly keeps it and the extrapolation close, and too few or bad points are refused."""

from __future__ import annotations

import math
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
    assert model.smape < 1e-6 and model.adjusted_r2 == pytest.approx(1.0)


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
    # the misses take a term that grows alike over 1..64 (p^(2/3) log2(p)^2 thrice, p^(4/3) twice)
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


def test_the_hypotheses_are_extra_ps_default_ones():
    """42 terms (Extra-P 4.2.5's default: not every exponent times a log); negative adds each
    mirrored, x^-i log2(x)^-j, not x^-i log2(x)^+j (test_extrap_adapter.py compares the lists
    with Extra-P's own)."""
    plain = hypotheses()
    assert len(plain) == len(set(plain)) == 42
    assert {Term(Fraction(1, 2), 0), Term(Fraction(0), 1), Term(Fraction(5, 2), 2),
            Term(Fraction(3), 1)} <= set(plain)
    assert not {Term(Fraction(7, 4), 2), Term(Fraction(11, 4), 2), Term(Fraction(3), 2),
                Term(Fraction(4, 5), 1), Term(Fraction(0), 0)} & set(plain)
    negative = hypotheses(negative=True)
    assert negative[:42] == plain and len(set(negative)) == 84
    assert set(negative[42:]) == {Term(-t.i, -t.j) for t in plain}
    assert Term(Fraction(-1), -1) in negative and Term(Fraction(-1), 1) not in negative
    assert Term(Fraction(1, 2), 1).text("n") == "n^(1/2) * log2(n)"
    assert Term(Fraction(-1, 2), -1).text("p") == "p^(-1/2) * log2(p)^-1"


def test_log_terms_need_every_x_at_least_1_or_above_1_with_negative_exponents():
    log_data = [(p, 1 + math.log2(p)) for p in RANKS]        # p = 1: log2(p)^-1 is infinite
    assert fit_pmnf(log_data).leading == "log2(p)"
    assert fit_pmnf(log_data, negative=True).term.j == 0
    assert fit_pmnf(log_data[1:], negative=True).leading == "log2(p)"
    below_1 = [(x, 1 + math.log2(x) ** 2) for x in (0.25, 0.5, 1, 2, 4, 8)]
    assert fit_pmnf(below_1).term.j == 0
    assert fit_pmnf(below_1[2:] + [(16, 17.0)]).leading == "log2(p)^2"


def test_a_term_under_a_20th_of_a_percent_of_every_value_is_not_taken():
    model = fit_pmnf([(p, 1000 + 1e-4 * p) for p in RANKS])       # at most 6.4e-6 of a value
    assert model.term is None and model.constant == pytest.approx(1000.0018142857)
    assert fit_pmnf([(p, 1000 + 1e-2 * p) for p in RANKS]).leading == "p"


def test_a_constant_coefficient_under_a_20th_of_a_percent_is_dropped_only_in_cross_validation():
    model = fit_pmnf([(p, 1e-4 + p) for p in RANKS])
    assert model.leading == "p" and model.constant == pytest.approx(1e-4)   # not in the model
    assert model.smape == pytest.approx(0.0028347262)    # but its leave-one-out fits lack it
    assert fit_pmnf([(p, 1e-2 + p) for p in RANKS]).smape < 1e-9


def test_the_constant_is_judged_by_its_smape_over_all_points():
    """Not by its leave-one-out SMAPE (0.67%), which p^(3/2) log2(p)^2's (0.565%) would beat."""
    values = [2.492, 2.512, 2.499, 2.459, 2.496, 2.478]          # about 2.5 with 1% noise
    model = fit_pmnf(list(zip(RANKS[1:], values)))
    y = np.array(values)
    assert model.term is None and model.constant == pytest.approx(y.mean())
    assert model.smape == pytest.approx(100 * np.mean(2 * np.abs(y.mean() - y) / (y.mean() + y)))
    assert model.smape == pytest.approx(0.5585, abs=1e-4)
