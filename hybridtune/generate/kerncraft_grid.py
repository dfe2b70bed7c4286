"""Grid layouts in the kerncraft form: one array dimension per grid axis.

Subscripts are then small integers.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from hybridtune.describe.expr import Name
from hybridtune.describe.ivp import IVP
from hybridtune.generate.ckernel import IVP_PREFIX
from hybridtune.generate.size_expressions import N, sympy_of


@dataclass(frozen=True)
class GridLayout:
    """Arrays of an IVP on a grid of g points per side (n = fields * g^d) declared
    [fields][g]..[g] (no [fields] for one field): a subscript j + c_d g^d + .. + c_1 g + c_0 is
    printed [c_d]..[c_1][j + c_0], each outer digit counted from the lowest one the loop uses."""
    root: str                   # the root's C name (ivp_g)
    dims: tuple                 # the declared dimensions as text
    digits: dict                # subscript expression -> (outer digits..., column)
    lowest: tuple               # per outer digit, the smallest the loop uses (at most 0)

    @property
    def declaration(self) -> str:
        return "".join(f"[{d}]" for d in self.dims)

    def split(self, expr) -> tuple:
        *outer, column = self.digits[expr]
        return tuple(Name(str(d - low)) for d, low in zip(outer, self.lowest)) + \
            (Name(str(column)),)


def grid_layout(ivp: IVP, exprs: list, symbols: dict) -> GridLayout | None:
    """The grid layout of a loop whose subscripts (sympy, in j, n and the IVP's integer
    quantities as `symbols`) are all j plus an integer polynomial in the grid's root, or None."""
    if not ivp.sizes.root or not exprs:
        return None
    name, degree = ivp.sizes.root
    fields = ivp.sizes.fields
    g, j = symbols.get(IVP_PREFIX + name), symbols["j"]
    if g is None or not any(expr.free_symbols - {j} for expr in exprs):
        return None       # subscripts in j alone need no grid
    in_g = {N: fields * g ** degree}
    for symbol in symbols.values():
        if symbol not in (g, j):
            in_g[symbol] = sympy.expand(
                sympy_of(Name(str(symbol)[len(IVP_PREFIX):]), ivp).subs(N, fields * g ** degree))
    top = degree if fields > 1 else degree - 1
    digits = {}
    for expr in exprs:
        rest = sympy.expand(expr.subs(in_g) - j)
        if rest.free_symbols - {g}:
            return None
        try:
            poly = sympy.Poly(rest, g)
        except sympy.PolynomialError:
            return None
        coeffs = [poly.coeff_monomial(g ** d) for d in range(top, -1, -1)]
        if poly.degree() > top or not all(c.is_Integer for c in coeffs):
            return None
        if fields > 1 and not 0 <= coeffs[0] < fields:
            return None
        digits[expr] = tuple(int(c) for c in coeffs[:-1]) + (j + coeffs[-1],)
    lowest = tuple(min(min(d[k] for d in digits.values()), 0) for k in range(top))
    dims = ((str(fields),) if fields > 1 else ()) + (IVP_PREFIX + name,) * degree
    return GridLayout(IVP_PREFIX + name, dims, digits, lowest)
