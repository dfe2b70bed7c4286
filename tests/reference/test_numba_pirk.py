"""The numba baseline's sources: its hand-written right-hand sides agree with the reference."""

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.reference.numba_pirk import SUPPORTED, rhs_source, step_source
from hybridtune.reference.pirk import pirk_step
from hybridtune.reference.rhs import initial_values, right_hand_side


def plain(source: str, name: str):
    """The function of a numba source run as plain Python (prange as range)."""
    namespace: dict = {}
    exec(source.replace("from numba import prange", "prange = range"), namespace)
    return namespace[name]


@pytest.mark.parametrize("ivp_name", SUPPORTED)
def test_the_hand_written_right_hand_side_is_the_ivps(ivp_name):
    ivp = load_named("ivp", ivp_name, PROJECT_ROOT)
    n = 64
    x = np.random.default_rng(1).uniform(0.0, 5.0, n)
    got = np.empty(n)
    plain(rhs_source(ivp_name), "rhs")(1.7, x, got)
    assert np.allclose(got, right_hand_side(ivp, n)(1.7, x), rtol=1e-12, atol=1e-12)


def test_one_step_is_the_reference_step():
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    ivp = load_named("ivp", "InverterChain", PROJECT_ROOT)
    n, h = 32, 1e-3
    y0 = initial_values(ivp, n)
    y, s = y0.copy(), method.stages
    plain(step_source(method, "InverterChain"), "step")(y, np.zeros((s, n)), np.zeros((s, n)),
                                                         np.zeros(n), 0.0, h)
    assert np.allclose(y, pirk_step(right_hand_side(ivp, n), 0.0, y0, h, method), rtol=1e-10)


def test_an_ivp_without_a_hand_written_right_hand_side_is_refused():
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    with pytest.raises(ValueError, match="no hand-written numba right-hand side"):
        step_source(method, "Cusp")
