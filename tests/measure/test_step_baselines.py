"""The baselines beside generated code: the numpy step timed, its reference states computed once."""

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.measure.step_baselines import (ReferenceStates, numba_case, numpy_case,
                                              relative_error)
from hybridtune.reference.numba_pirk import NumbaPIRK


@pytest.fixture(scope="module")
def method_and_ivp():
    return (load_named("method", "radauIIA7", PROJECT_ROOT),
            load_named("ivp", "InverterChain", PROJECT_ROOT))


def test_relative_error_is_relative_to_the_largest_reference_value():
    assert relative_error([1.0, 2.5], np.array([1.0, 2.0])) == 0.25
    assert relative_error([0.5], np.array([0.0])) == 0.5


def test_reference_states_are_computed_once(method_and_ivp):
    method, ivp = method_and_ivp
    states = ReferenceStates(method)
    first = states.after(ivp, 40, 2)
    assert states.after(ivp, 40, 2) is first and len(states.cache) == 1


def test_the_numpy_step_is_timed_under_the_protocol(method_and_ivp):
    method, ivp = method_and_ivp
    case = numpy_case(method, ivp, 40, large=True)
    assert case["status"] == "ok" and case["threads"] == 1
    assert case["repetitions"] == 3 and case["steps_per_repetition"] >= 1
    assert case["median_s"] > 0 and case["ci_rel"] is None


@pytest.mark.slow
def test_the_numba_step_is_checked_and_timed(method_and_ivp):
    pytest.importorskip("numba")
    method, ivp = method_and_ivp
    step = NumbaPIRK(method, ivp.name)
    step.compile()
    case = numba_case(step, ivp, 600, 1, ReferenceStates(method))
    assert case["status"] == "ok" and case["check_error"] <= 1e-10
    assert case["rhs_error_n600"] <= 1e-12 and case["median_s"] > 0
    assert step.arrays is None
