"""Butcher tables of collocation-type methods computed from their definitions (Radau, Lobatto, Gauss)."""

from __future__ import annotations

import numpy as np
from numpy.polynomial import legendre

from hybridtune.errors import RequestError

# family -> (order as a function of s, a short definition)
FAMILIES = {
    "gauss": (lambda s: 2 * s, "Gauss-Legendre collocation"),
    "radauIA": (lambda s: 2 * s - 1, "Radau IA: left Radau nodes, D(s)"),
    "radauIIA": (lambda s: 2 * s - 1, "Radau IIA: right Radau collocation"),
    "lobattoIIIC": (lambda s: 2 * s - 2, "Lobatto IIIC: Lobatto nodes, a_i1 = b_1, C(s-1)"),
}


def _shifted_legendre(k: int) -> np.ndarray:
    """Coefficients (in the Legendre basis on [-1, 1]) of P_k."""
    coef = np.zeros(k + 1)
    coef[k] = 1.0
    return coef


def _roots_on_unit_interval(leg_coef: np.ndarray) -> np.ndarray:
    roots = legendre.legroots(leg_coef)
    return np.sort((np.real(roots) + 1.0) / 2.0)


def nodes(family: str, s: int) -> np.ndarray:
    """Collocation nodes c_1 < ... < c_s in [0, 1]."""
    if family == "gauss":
        return _roots_on_unit_interval(_shifted_legendre(s))
    if family == "radauIIA":   # zeros of P_s(2x-1) - P_{s-1}(2x-1): right end point included
        return _roots_on_unit_interval(_shifted_legendre(s) - np.pad(_shifted_legendre(s - 1), (0, 1)))
    if family == "radauIA":    # zeros of P_s(2x-1) + P_{s-1}(2x-1): left end point included
        return _roots_on_unit_interval(_shifted_legendre(s) + np.pad(_shifted_legendre(s - 1), (0, 1)))
    if family == "lobattoIIIC":  # 0, 1 and the zeros of P'_{s-1}(2x-1)
        inner = _roots_on_unit_interval(legendre.legder(_shifted_legendre(s - 1))) if s > 2 \
            else np.array([])
        return np.concatenate(([0.0], inner, [1.0]))
    raise RequestError(f"unknown method family '{family}' (known: {', '.join(FAMILIES)})")


def _vandermonde(c: np.ndarray) -> np.ndarray:
    s = len(c)
    return np.vander(c, s, increasing=True)   # V[i, k] = c_i^k


def weights(c: np.ndarray) -> np.ndarray:
    """Quadrature weights b from B(s): sum_i b_i c_i^(k-1) = 1/k."""
    s = len(c)
    return np.linalg.solve(_vandermonde(c).T, 1.0 / np.arange(1, s + 1))


def butcher(family: str, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(A, b, c, order) of the s-stage method of a family."""
    if family not in FAMILIES:
        raise RequestError(f"unknown method family '{family}' (known: {', '.join(FAMILIES)})")
    minimum = 2 if family == "lobattoIIIC" else 1
    if not isinstance(s, int) or s < minimum or s > 12:
        raise RequestError(f"{family} needs {minimum} <= stages <= 12, got {s}")
    c = nodes(family, s)
    b = weights(c)
    k = np.arange(1, s + 1)
    V = _vandermonde(c)
    if family in ("gauss", "radauIIA"):
        # C(s): sum_j a_ij c_j^(k-1) = c_i^k / k
        rhs = c[:, None] ** k[None, :] / k[None, :]
        A = np.linalg.solve(V.T, rhs.T).T
    elif family == "radauIA":
        # D(s): sum_i b_i c_i^(k-1) a_ij = b_j (1 - c_j^k) / k
        rhs = b[None, :] * (1.0 - c[None, :] ** k[:, None]) / k[:, None]
        A = np.linalg.solve(V.T * b[None, :], rhs)
    else:
        # a_i1 = b_1 and C(s-1) on the remaining columns
        A = np.zeros((s, s))
        A[:, 0] = b[0]
        kk = np.arange(1, s)
        M = c[1:, None] ** (kk[None, :] - 1)        # rows: j = 2..s, cols: k = 1..s-1
        for i in range(s):
            target = c[i] ** kk / kk - b[0] * (0.0 ** (kk - 1))
            A[i, 1:] = np.linalg.solve(M.T, target)
    return A, b, c, FAMILIES[family][0](s)


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
