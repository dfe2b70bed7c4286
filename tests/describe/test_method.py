"""Method descriptions: Offsite's .ode files load unchanged; malformed tables are refused with a located error."""

import numpy as np
import pytest

from hybridtune.describe.loader import load
from hybridtune.errors import DescriptionError
from tests_support import SHARED_METHODS, expect_error

OFFSITE = sorted(SHARED_METHODS.glob("*.ode"))


@pytest.mark.parametrize("path", OFFSITE, ids=lambda p: p.stem)
def test_offsite_files_load_unchanged(path):
    method = load(path)
    A, b, c = method.arrays()
    assert A.shape == (method.stages, method.stages)
    assert np.allclose(A.sum(axis=1), c, atol=1e-12)
    assert method.corrector_steps == method.order - 1


def test_offsite_expressions_with_sqrt():
    method = load(SHARED_METHODS / "lobattoIIIC6.ode")
    assert method.A[0][1] == pytest.approx(-np.sqrt(5.0) / 12.0, rel=1e-15)
    assert method.c[1] == pytest.approx((5.0 - np.sqrt(5.0)) / 10.0, rel=1e-15)


GOOD = """
stages: 2
order: 3
A: [["0.25", "0.25 - sqrt(3.0) / 6.0"], ["0.25 + sqrt(3.0) / 6.0", 0.25]]
b: [0.5, 0.5]
c: ["0.5 - sqrt(3.0) / 6.0", "0.5 + sqrt(3.0) / 6.0"]
"""


def test_good_method_and_default_m(write):
    method = load(write("g.method.yaml", GOOD))
    assert method.stages == 2 and method.corrector_steps == 2   # m = p - 1 by default
    assert method.pirk_order == 3


@pytest.mark.parametrize("change, key, line, expected", [
    (("stages: 2", "stages: 3"), "A", 3, "3 rows"),
    (("b: [0.5, 0.5]", "b: [0.5, 0.5, 0.0]"), "b", 4, "a list of 2 entries"),
    (("c: [", "c: [0.1, "), "c", 5, "a list of 2 entries"),
    (('["0.25", "0.25 - sqrt(3.0) / 6.0"]', '["0.25"]'), "A[0]", 3, "a list of 2 entries"),
    (("c: [\"0.5 - sqrt", "c: [\"0.4 - sqrt"), "c[0]", 5, "row sum of A[0]"),
    (("order: 3", "order: 3\nsteps: 2"), "steps", 3, "unknown key"),
    (("order: 3\n", ""), "order", None, "missing"),
    (("b: [0.5, 0.5]", "b: [0.5, \"exp(1) + x\"]"), "b[1]", 4, "no name 'x'"),
    (("b: [0.5, 0.5]", "b: [0.5, \"1.0 / 0.0\"]"), "b[1]", 4, "finite"),
    (("b: [0.5, 0.5]", "b: [0.5, \"0.5; rm\"]"), "b[1]", 4, "statement separator"),
    (("b: [0.5, 0.5]", "b: [0.5, true]"), "b[1]", 4, "a number"),
    (("stages: 2", "stages: two"), "stages", 1, "an integer"),
    (("b: [0.5, 0.5]", "b: [0.5, 99999999999999999999999]"), "b[1]", 4, "a point or an exponent"),
    (("b: [0.5, 0.5]", "b: [0.5, \"(((1e308 * 10)))\"]"), "b[1]", 4, "finite"),
    (('c: ["0.5 - sqrt(3.0) / 6.0"', 'c: ["1e300"'), "c[0]", 5, "row sum of A[0]"),
])
def test_malformed_method(write, change, key, line, expected):
    path = write("bad.method.yaml", GOOD.replace(*change, 1))
    expect_error(path, key=key, line=line, expected=expected)


def test_not_yaml(write):
    path = write("broken.method.yaml", "stages: [1, 2\n")
    with pytest.raises(DescriptionError, match="valid YAML") as info:
        load(path)
    assert info.value.file == str(path)


def test_order_conditions_that_overflow_fail(write):
    """c_1 = 1e300 with b_1 = 0 passes B(2); c_1^2 overflows, and B(3) fails instead of crashing."""
    path = write("huge.method.yaml", """
        stages: 2
        order: 3
        A: [["1e300", 0], [0.25, 0.25]]
        b: [0, 1]
        c: ["1e300", 0.5]
        """)
    expect_error(path, key="order", line=2, expected="fails at k = 3")


def test_order_is_checked_against_b_and_c(write):
    path = write("o.method.yaml", GOOD.replace("order: 3", "order: 5"))
    expect_error(path, key="order", line=2, expected="fails at k = 5")
