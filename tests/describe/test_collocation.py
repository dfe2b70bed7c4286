"""Collocation methods: the shipped tables are computed, satisfy the simplifying conditions, match Offsite."""

import numpy as np
import pytest

from hybridtune.describe.collocation import butcher, method_yaml
from hybridtune.describe.library import library_files
from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from tests_support import SHARED_METHODS

# name -> (family, s, B, C, D): the simplifying conditions B(p), C(q), D(r) each family satisfies
SHIPPED = {
    "radauIA5": ("radauIA", 3, 5, 2, 3),
    "radauIIA5": ("radauIIA", 3, 5, 3, 2),
    "radauIIA7": ("radauIIA", 4, 7, 4, 3),
    "lobattoIIIC4": ("lobattoIIIC", 3, 4, 2, 2),
    "lobattoIIIC6": ("lobattoIIIC", 4, 6, 3, 3),
    "lobattoIIIC8": ("lobattoIIIC", 5, 8, 4, 4),
    "gauss4": ("gauss", 2, 4, 2, 2),
    "gauss6": ("gauss", 3, 6, 3, 3),
}


def simplifying(A, b, c, kind, q, tol=1e-13):
    k = np.arange(1, q + 1)
    if kind == "B":
        residual = (b[None, :] * c[None, :] ** (k[:, None] - 1)).sum(axis=1) - 1.0 / k
    elif kind == "C":
        residual = A @ (c[:, None] ** (k[None, :] - 1)) - c[:, None] ** k[None, :] / k[None, :]
    else:
        residual = (b[:, None] * c[:, None] ** (k[None, :] - 1)).T @ A \
            - b[None, :] * (1 - c[None, :] ** k[:, None]) / k[:, None]
    return np.abs(residual).max()


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_method_satisfies_order_conditions(name):
    family, s, p, q, r = SHIPPED[name]
    method = load(library_files("method")[name])
    A, b, c = method.arrays()
    assert (method.stages, method.order, method.corrector_steps) == (s, p, p - 1)
    assert simplifying(A, b, c, "B", p) < 1e-13
    assert simplifying(A, b, c, "C", q) < 1e-13
    assert simplifying(A, b, c, "D", r) < 1e-13
    # one order more would not hold: the conditions are what defines the family
    assert simplifying(A, b, c, "B", p + 1) > 1e-6


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_file_is_what_the_generator_writes(name):
    family, s = SHIPPED[name][:2]
    assert library_files("method")[name].read_text() == method_yaml(name, family, s)


@pytest.mark.parametrize("path", sorted(SHARED_METHODS.glob("*.ode")), ids=lambda p: p.stem)
def test_offsite_tables_agree_to_rounding(path):
    ours = load(library_files("method")[path.stem])
    theirs = load(path)
    for a, b in zip(ours.arrays(), theirs.arrays()):
        assert np.abs(a - b).max() < 5e-13   # Offsite's tables carry 14 digits


def test_bad_requests():
    with pytest.raises(RequestError, match="unknown method family"):
        butcher("adams", 3)
    with pytest.raises(RequestError, match="stages"):
        butcher("lobattoIIIC", 1)
