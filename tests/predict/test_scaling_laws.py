"""Amdahl's and Gustafson's serial fractions: recovered from curves of known fraction, near them under noise, and refused on too few or bad points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict.scaling_laws import amdahl, gustafson

RANKS = [1, 2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("f", [0.0, 0.01, 0.05, 0.3, 1.0])
def test_amdahls_fraction_of_an_exact_curve_is_recovered(f):
    fit = amdahl([(p, 1 / (f + (1 - f) / p)) for p in RANKS])
    assert fit.fraction == pytest.approx(f, abs=1e-12) and fit.rms_rel_error < 1e-9
    assert fit.limit == (math.inf if f == 0 else pytest.approx(1 / f))
    assert fit.speedup(128) == pytest.approx(1 / (f + (1 - f) / 128))


@pytest.mark.parametrize("f", [0.0, 0.1, 0.5])
def test_gustafsons_fraction_of_an_exact_curve_is_recovered(f):
    fit = gustafson([(p, p - f * (p - 1)) for p in RANKS])
    assert fit.fraction == pytest.approx(f, abs=1e-12) and fit.limit == math.inf
    assert fit.speedup(128) == pytest.approx(128 - f * 127)


def test_noise_of_a_few_percent_moves_the_fraction_a_little():
    rng = np.random.default_rng(5)
    fits = [amdahl([(p, rng.normal(1, 0.03) / (0.05 + 0.95 / p)) for p in RANKS]).fraction
            for _ in range(20)]
    assert abs(np.median(fits) - 0.05) < 0.01


def test_a_superlinear_curve_is_held_at_no_serial_part():
    assert amdahl([(p, 1.2 * p) for p in RANKS]).fraction == 0.0


def test_too_few_or_bad_points_are_refused():
    with pytest.raises(HybridtuneError, match="at least 2 rank counts above 1"):
        amdahl([(1, 1.0), (2, 1.8)])
    with pytest.raises(HybridtuneError, match="positive finite speedups"):
        gustafson([(1, 1.0), (2, 0.0), (4, 3.0)])
    with pytest.raises(HybridtuneError, match="rank counts >= 1"):
        amdahl([(0.5, 1.0), (2, 1.8), (4, 3.0)])
