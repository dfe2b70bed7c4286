"""Butcher tables of collocation-type methods computed from their definitions (Radau, Lobatto, Gauss).

Nodes are roots of shifted Legendre polynomials with exact integer coefficients; nodes, weights and
A are computed in 50-digit arithmetic (mpmath) and rounded once, so tables are correct to the last bit.
"""

from __future__ import annotations

from math import comb

import mpmath
import numpy as np

from hybridtune.errors import RequestError

DIGITS = 50

# family -> (order as a function of s, a short definition)
FAMILIES = {
    "gauss": (lambda s: 2 * s, "Gauss-Legendre collocation"),
    "radauIA": (lambda s: 2 * s - 1, "Radau IA: left Radau nodes, D(s)"),
    "radauIIA": (lambda s: 2 * s - 1, "Radau IIA: right Radau collocation"),
    "lobattoIIIC": (lambda s: 2 * s - 2, "Lobatto IIIC: Lobatto nodes, a_i1 = b_1, C(s-1)"),
}


def shifted_legendre(k: int) -> list[int]:
    """Integer coefficients (constant term first) of P_k(2x - 1)."""
    return [(-1) ** (k + i) * comb(k, i) * comb(k + i, i) for i in range(k + 1)]


def _roots(coefficients: list[int]) -> list:
    """Real roots in [0, 1], ascending, of a polynomial given constant term first."""
    while coefficients and coefficients[-1] == 0:
        coefficients = coefficients[:-1]
    if len(coefficients) < 2:
        return []
    roots = mpmath.polyroots(coefficients[::-1], maxsteps=200, extraprec=4 * DIGITS)
    return sorted(mpmath.re(r) for r in roots)


def _combine(p: list[int], q: list[int], sign: int) -> list[int]:
    size = max(len(p), len(q))
    p, q = p + [0] * (size - len(p)), q + [0] * (size - len(q))
    return [a + sign * b for a, b in zip(p, q)]


def nodes(family: str, s: int) -> list:
    """Collocation nodes c_1 < ... < c_s in [0, 1]."""
    if family == "gauss":
        return _roots(shifted_legendre(s))
    if family == "radauIIA":   # P_s - P_{s-1}: right end point included
        return _roots(_combine(shifted_legendre(s), shifted_legendre(s - 1), -1))
    if family == "radauIA":    # P_s + P_{s-1}: left end point included
        return _roots(_combine(shifted_legendre(s), shifted_legendre(s - 1), +1))
    if family == "lobattoIIIC":  # 0, 1 and the zeros of P'_{s-1}
        p = shifted_legendre(s - 1)
        derivative = [i * p[i] for i in range(1, len(p))]
        return [mpmath.mpf(0)] + _roots(derivative) + [mpmath.mpf(1)]
    raise RequestError(f"unknown method family '{family}' (known: {', '.join(FAMILIES)})")


def _coefficients(family: str, s: int, c, b, V) -> mpmath.matrix:
    """A of the family's s-stage method from its nodes c, weights b and Vandermonde matrix V
    (V[k, i] = c_i^(k-1)), at the working precision."""
    A = mpmath.matrix(s, s)
    k = range(1, s + 1)
    if family in ("gauss", "radauIIA"):       # C(s) row by row
        for i in range(s):
            row = mpmath.lu_solve(V, mpmath.matrix([c[i] ** kk / kk for kk in k]))
            for j in range(s):
                A[i, j] = row[j]
    elif family == "radauIA":                 # D(s) column by column
        weighted = mpmath.matrix([[b[i] * c[i] ** (kk - 1) for i in range(s)] for kk in k])
        for j in range(s):
            col = mpmath.lu_solve(weighted, mpmath.matrix([b[j] * (1 - c[j] ** kk) / kk
                                                            for kk in k]))
            for i in range(s):
                A[i, j] = col[i]
    else:                                     # a_i1 = b_1, C(s-1) on the other columns
        kk1 = range(1, s)
        M = mpmath.matrix([[c[j] ** (kk - 1) for j in range(1, s)] for kk in kk1])
        for i in range(s):
            A[i, 0] = b[0]
            rhs = mpmath.matrix([c[i] ** kk / kk - b[0] * (1 if kk == 1 else 0) for kk in kk1])
            rest = mpmath.lu_solve(M, rhs)
            for j in range(1, s):
                A[i, j] = rest[j - 1]
    return A


def butcher(family: str, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(A, b, c, order) of the s-stage method of a family."""
    if family not in FAMILIES:
        raise RequestError(f"unknown method family '{family}' (known: {', '.join(FAMILIES)})")
    minimum = 2 if family == "lobattoIIIC" else 1
    if isinstance(s, bool) or not isinstance(s, int) or s < minimum or s > 12:
        raise RequestError(f"{family} needs {minimum} <= stages <= 12, got {s}")
    with mpmath.workdps(DIGITS):
        c = nodes(family, s)
        k = range(1, s + 1)
        V = mpmath.matrix([[ci ** (kk - 1) for ci in c] for kk in k])       # V[k, i] = c_i^(k-1)
        b = mpmath.lu_solve(V, mpmath.matrix([mpmath.mpf(1) / kk for kk in k]))   # B(s)
        A = _coefficients(family, s, c, b, V)
        to_float = lambda x: float(mpmath.nstr(x, 25))   # noqa: E731 - correctly rounded
        return (np.array([[to_float(A[i, j]) for j in range(s)] for i in range(s)]),
                np.array([to_float(x) for x in b]), np.array([to_float(x) for x in c]),
                FAMILIES[family][0](s))


def method_yaml(name: str, family: str, s: int) -> str:
    """A method description file for the s-stage method of a family, m = p - 1."""
    A, b, c, order = butcher(family, s)
    fmt = lambda x: repr(float(x))  # noqa: E731 - shortest round-trip repr
    rows = ",\n    ".join("[" + ", ".join(fmt(x) for x in row) + "]" for row in A)
    return (f"# {name}: {FAMILIES[family][1]}, s = {s}, order {order}; written by\n"
            f"# `hybridtune method {family} {s}` from the collocation conditions.\n"
            f"name: {name}\nstages: {s}\norder: {order}\ncorrector_steps: {max(order - 1, 1)}\n"
            f"A: [{rows}]\n"
            f"b: [{', '.join(fmt(x) for x in b)}]\n"
            f"c: [{', '.join(fmt(x) for x in c)}]\n")
