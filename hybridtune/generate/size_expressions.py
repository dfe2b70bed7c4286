"""Size expressions in n as sympy, and calls and conditionals as plain arithmetic for kerncraft."""

from __future__ import annotations

import math
from functools import lru_cache

import sympy

from hybridtune.describe.costs import CALL_OPERATIONS
from hybridtune.describe.expr import Binary, Call, Cond, Name, Num, Unary, rewrite
from hybridtune.describe.ivp import IVP
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import IVP_PREFIX, GenerationError

N = sympy.Symbol("n", positive=True, integer=True)
_ARITHMETIC = ("+", "-", "*", "/")


def sympy_of(tree, ivp: IVP | None):
    """A size expression (in n and the IVP's integer quantities) as sympy, quantities expanded."""
    defined = {}
    if ivp is not None:
        if ivp.sizes.root:
            name, degree = ivp.sizes.root
            defined[name] = (N / ivp.sizes.fields) ** sympy.Rational(1, degree)
        for name, quantity in ivp.quantities:
            defined[name] = to_sympy(quantity, defined)
        defined.update({IVP_PREFIX + k: v for k, v in list(defined.items())})
    return to_sympy(tree, defined)


def to_sympy(tree, defined: dict):
    if isinstance(tree, Num):
        return sympy.Integer(tree.value) if isinstance(tree.value, int) else sympy.Float(tree.value)
    if isinstance(tree, Name):
        if tree.id == "n":
            return N
        if tree.id in defined:
            return defined[tree.id]
        raise GenerationError(f"size expression uses '{tree.id}', which is not n or an IVP quantity")
    if isinstance(tree, Unary) and tree.op == "-":
        return -to_sympy(tree.operand, defined)
    if isinstance(tree, Binary) and tree.op in _ARITHMETIC:
        left, right = to_sympy(tree.left, defined), to_sympy(tree.right, defined)
        return {"+": left + right, "-": left - right, "*": left * right,
                "/": left / right}[tree.op]
    raise GenerationError(f"size expression {to_c(tree)} is not arithmetic in n")


def _power_of_two(value) -> bool:
    mantissa, _ = math.frexp(value)
    return value != 0 and abs(mantissa) == 0.5 and math.isfinite(value)


def as_arithmetic(tree):
    """Calls and conditionals as arithmetic with the same operation count and array reads.

    A call costs CALL_OPERATIONS[func] operations (describe/costs.py: a libm exp about 20, pow
    41, sqrt 1): its k arguments are added (k - 1 operations) and the result multiplied by a
    literal as often as the rest of the cost asks (at least once for one argument); a
    comparison or logical operator becomes a subtraction; c ? a : b becomes c * a when b is a
    literal, c * b when a is, else c * a + b (one operation more than the select it stands
    for). A division by a literal power of two is the multiplication by its inverse that gcc
    makes of it.
    """
    def rule(node):
        if isinstance(node, Binary) and node.op == "/" and isinstance(node.right, Num) \
                and _power_of_two(node.right.value):
            inverse = 1.0 / node.right.value
            return Binary("*", node.left, Num(inverse, repr(inverse)))
        if isinstance(node, Call):
            out = node.args[0]
            for arg in node.args[1:]:
                out = Binary("+", out, arg)
            for _ in range(max(CALL_OPERATIONS.get(node.func, 1) - (len(node.args) - 1), 0)):
                out = Binary("*", out, Num(1.5, "1.5"))
            return out
        if isinstance(node, Binary) and node.op not in _ARITHMETIC:
            return Binary("-", node.left, node.right)
        if isinstance(node, Unary) and node.op == "!":
            return node.operand
        if isinstance(node, Cond):
            if isinstance(node.other, Num):
                return Binary("*", node.test, node.then)
            if isinstance(node.then, Num):
                return Binary("*", node.test, node.other)
            return Binary("+", Binary("*", node.test, node.then), node.other)
        return node
    return rewrite(tree, rule)


@lru_cache(maxsize=None)
def vanishes(iterations) -> bool:
    """Whether a count of components is a vanishing share of n as n grows (O(sqrt n), O(1))."""
    return sympy.limit(iterations / N, N, sympy.oo) == 0


def spread(offsets: list):
    """Largest minus smallest of offsets linear in n, for large n: ordered by n's coefficient, then
    the constant (sympy's Max of such terms is exact too, but costs milliseconds each)."""
    ordered = sorted(set(offsets), key=lambda pair: pair[1])
    return ordered[-1][0] - ordered[0][0]
