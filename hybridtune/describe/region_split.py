"""Regions of j cut until every %in index of a component block is j plus a constant.

The symbolic side of ivp_split: sizes, quotients, remainders and conditions over a region, in sympy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hybridtune.describe.expr import Binary, Cond, Name, Num, Unary, parse_expression
from hybridtune.describe.printing import to_c

MAX_PIECES = 64          # blocks one component block may split into
MAX_LEVELS = 2           # a block's repeat and outer_repeat
SPLITTING = ("/", "%")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
LOGICAL = ("&&", "||")


class Refused(Exception):
    """The split cannot take this index; the text says why (the Refusal's reason)."""


class _Split(Exception):
    """The region must be split into these regions before the index can be evaluated."""

    def __init__(self, regions: list):
        super().__init__()
        self.regions = regions


@dataclass(frozen=True)
class IndexRegion:
    """Components j = first + sum_i v_i stride_i + q, v_i < count_i (outermost first), q < size."""
    first: object
    levels: tuple           # ((count, stride), ...)
    size: object


class Splitter:
    """Over the IVP's sizes, as polynomials in its base size: the regions of j on which each index
    is j plus a constant (pieces), or Refused."""
    def __init__(self, ivp):
        import sympy            # slow to import (0.2 s): only when an IVP has an index to split
        self.sympy = sympy
        self.ivp = ivp
        root = ivp.sizes.root
        smallest = ivp.sizes.next_valid(ivp.sizes.minimum)
        if root:
            # the grid's side g: n = fields g^d
            self.base = sympy.Symbol(root[0], positive=True, integer=True)
            self.lowest = ivp.sizes.root_value(smallest)
            self.printed, self.to_printed = self.base, {}
            self.defined = {"n": ivp.sizes.fields * self.base ** root[1], root[0]: self.base}
        else:
            # t = n / multiple_of, so that n / multiple_of is an integer polynomial
            step = ivp.sizes.multiple_of
            self.base = sympy.Symbol("ht_t", positive=True, integer=True)
            self.lowest = -(-smallest // step)
            self.printed = sympy.Symbol("n", positive=True, integer=True)
            self.to_printed = {self.base: self.printed / step}
            self.defined = {"n": step * self.base}
        self.quantity_trees = dict(ivp.quantities)      # expanded when first used
        self.signs: dict = {}                           # nonnegative(expr), memoised
        self.divided: dict = {}                         # divide(value, d), memoised
        self.q = sympy.Symbol("ht_q", integer=True, nonnegative=True)
        self.v = [sympy.Symbol(f"ht_v{i}", integer=True, nonnegative=True)
                  for i in range(MAX_LEVELS)]

    # sizes --------------------------------------------------------------------------------
    def size(self, tree):
        """A j-free integer expression as a polynomial in the base size (quantities expanded)."""
        sympy = self.sympy
        if isinstance(tree, Num) and isinstance(tree.value, int):
            return sympy.Integer(tree.value)
        if isinstance(tree, Name) and tree.id not in self.defined \
                and tree.id in self.quantity_trees:
            self.defined[tree.id] = self.size(self.quantity_trees[tree.id])
        if isinstance(tree, Name) and tree.id in self.defined:
            return self.defined[tree.id]
        if isinstance(tree, Unary) and tree.op in "-+":
            value = self.size(tree.operand)
            return -value if tree.op == "-" else value
        if isinstance(tree, Binary) and tree.op in ("+", "-", "*", "/"):
            left, right = self.size(tree.left), self.size(tree.right)
            if tree.op == "/":
                return self.exact_quotient(left, right)
            return sympy.expand({"+": left + right, "-": left - right, "*": left * right}[tree.op])
        raise Refused(f"uses {to_c(tree)}, which is not arithmetic in n and the quantities")

    def exact_quotient(self, left, right):
        quotient = self.sympy.cancel(left / right)
        if not quotient.is_polynomial(self.base):
            raise Refused(f"divides {self.shown(left)} by {self.shown(right)}, which is not "
                           "exact for every n")
        return self.sympy.expand(quotient)

    def nonnegative(self, expr) -> bool:
        """Whether expr >= 0 at every valid size: its coefficients in (base - smallest) are."""
        sympy = self.sympy
        expr = sympy.expand(expr)
        if expr not in self.signs:
            if expr.free_symbols - {self.base}:
                self.signs[expr] = False
            else:
                shifted = sympy.expand(expr.subs(self.base, self.base + self.lowest))
                self.signs[expr] = bool(shifted >= 0) if not shifted.free_symbols else \
                    all(c >= 0 for c in sympy.Poly(shifted, self.base).all_coeffs())
        return self.signs[expr]

    def is_zero(self, expr) -> bool:
        return self.sympy.expand(expr) == 0

    # regions ------------------------------------------------------------------------------
    def variables(self, region: IndexRegion) -> list:
        return self.v[:len(region.levels)] + [self.q]

    def j_of(self, region: IndexRegion):
        return region.first + sum((v * stride for v, (_, stride) in
                                   zip(self.v, region.levels)), self.sympy.Integer(0)) + self.q

    def simplified(self, region: IndexRegion) -> IndexRegion:
        """Levels that run once dropped."""
        levels = tuple((c, s) for c, s in region.levels if not self.is_zero(c - 1))
        return replace(region, levels=levels)

    def cut(self, region: IndexRegion, var, at) -> list:
        """The region with var's range cut at `at`: below it, and from it on."""
        if var == self.q:
            return [replace(region, size=at),
                    replace(region, first=self.sympy.expand(region.first + at),
                            size=self.sympy.expand(region.size - at))]
        level = self.v.index(var)
        count, stride = region.levels[level]
        below = list(region.levels)
        below[level] = (at, stride)
        above = list(region.levels)
        above[level] = (self.sympy.expand(count - at), stride)
        return [replace(region, levels=tuple(below)),
                replace(region, first=self.sympy.expand(region.first + at * stride),
                        levels=tuple(above))]

    def rows(self, region: IndexRegion, width, tree) -> list:
        """The region's contiguous run as rows of `width` (a new innermost repeat level), and the
        components after the last whole row as a region of their own."""
        if len(region.levels) >= MAX_LEVELS:
            raise Refused(f"needs more than {MAX_LEVELS} repeat levels")
        count, rest = self.divide(region.size, width, tree)
        if not self.nonnegative(count):
            raise Refused(f"needs rows of {self.shown(width)} in a run that may be shorter "
                           f"({to_c(tree)})")
        rows = replace(region, levels=region.levels + ((count, width),), size=width)
        if self.is_zero(rest):
            return [rows]
        return [rows, replace(region, first=self.sympy.expand(region.first + count * width),
                              size=rest)]

    # evaluation ---------------------------------------------------------------------------
    def value(self, tree, region: IndexRegion):
        """The index as an expression affine in the region's variables; raises _Split where the
        region must be cut first."""
        sympy = self.sympy
        if isinstance(tree, Name) and tree.id == "j":
            return sympy.expand(self.j_of(region))
        if isinstance(tree, (Num, Name)):
            return self.size(tree)
        if isinstance(tree, Unary) and tree.op in "-+":
            value = self.value(tree.operand, region)
            return -value if tree.op == "-" else value
        if isinstance(tree, Cond):
            chosen = tree.then if self.truth(tree.test, region) else tree.other
            return self.value(chosen, region)
        if isinstance(tree, Unary) and tree.op == "!" or isinstance(tree, Binary) and \
                tree.op in COMPARISONS + LOGICAL:
            return sympy.Integer(int(self.truth(tree, region)))
        if not isinstance(tree, Binary) or tree.op not in ("+", "-", "*", "/", "%"):
            raise Refused(f"uses {to_c(tree)}; the split takes +, -, *, /, %, comparisons "
                           "and ?: only")
        left, right = self.value(tree.left, region), self.value(tree.right, region)
        variables = set(self.variables(region))
        if tree.op == "+":
            return sympy.expand(left + right)
        if tree.op == "-":
            return sympy.expand(left - right)
        if tree.op == "*":
            if left.free_symbols & variables and right.free_symbols & variables:
                raise Refused(f"multiplies two terms in j ({to_c(tree)})")
            return sympy.expand(left * right)
        if right.free_symbols & variables:
            raise Refused(f"divides by a term in j ({to_c(tree)})")
        if not self.nonnegative(right - 1):
            raise Refused(f"divides by {to_c(tree.right)}, which is not positive for every n")
        quotient = self.quotient(left, right, region, tree)
        return quotient if tree.op == "/" else sympy.expand(left - right * quotient)

    def truth(self, test, region: IndexRegion) -> bool:
        """Whether a condition holds on the whole region; raises _Split where the region must be
        cut first (where the condition's difference crosses zero)."""
        sympy = self.sympy
        if isinstance(test, Unary) and test.op == "!":
            return not self.truth(test.operand, region)
        if isinstance(test, Binary) and test.op in LOGICAL:
            left = self.truth(test.left, region)
            if test.op == "&&":
                return left and self.truth(test.right, region)
            return left or self.truth(test.right, region)
        if not (isinstance(test, Binary) and test.op in COMPARISONS):
            return not self.is_zero(self.value(test, region))
        e = sympy.expand(self.value(test.left, region) - self.value(test.right, region))
        low = high = e
        moving = []
        for var, extent in zip(self.variables(region),
                               [c for c, _ in region.levels] + [region.size]):
            coefficient = sympy.expand(e.coeff(var))
            if self.is_zero(coefficient) or self.is_zero(extent - 1):
                low, high = low.subs(var, 0), high.subs(var, 0)
                continue
            if coefficient.free_symbols & set(self.variables(region)):
                raise Refused(f"tests a condition that is not affine in j ({to_c(test)})")
            moving.append((var, extent, coefficient))
            rising = self.nonnegative(coefficient)
            if not rising and not self.nonnegative(-coefficient):
                raise Refused(f"tests a condition whose sign the split cannot tell "
                               f"({to_c(test)})")
            low = low.subs(var, 0 if rising else extent - 1)
            high = high.subs(var, extent - 1 if rising else 0)
        low, high = sympy.expand(low), sympy.expand(high)
        decided = {"<": (self.nonnegative(-high - 1), self.nonnegative(low)),
                   "<=": (self.nonnegative(-high), self.nonnegative(low - 1)),
                   ">": (self.nonnegative(low - 1), self.nonnegative(-high)),
                   ">=": (self.nonnegative(low), self.nonnegative(-high - 1)),
                   "==": (self.is_zero(low) and self.is_zero(high),
                          self.nonnegative(low - 1) or self.nonnegative(-high - 1))}
        op = "==" if test.op == "!=" else test.op
        holds, fails = decided[op]
        if holds or fails:
            return holds if test.op != "!=" else not holds
        if len(moving) != 1:
            raise Refused(f"tests a condition that changes in more than one direction "
                           f"({to_c(test)})")
        if not self.is_zero(moving[0][2] ** 2 - 1):
            raise Refused(f"tests a condition that steps by {self.shown(moving[0][2])} per "
                           f"component; the split takes steps of 1 or -1 ({to_c(test)})")
        var, extent, coefficient = moving[0]
        zero = sympy.expand(-(e - coefficient * var) / coefficient)     # where e is 0
        for at in (zero, zero + 1):
            if self.nonnegative(-at) or self.nonnegative(at - extent):
                continue                    # not inside the range for any n
            if self.nonnegative(at - 1) and self.nonnegative(extent - 1 - at):
                raise _Split(self.cut(region, var, sympy.expand(at)))
            raise Refused(f"tests a condition that changes at a component not inside the "
                           f"block for every n ({to_c(test)})")
        raise Refused(f"tests a condition the split cannot decide ({to_c(test)})")

    def quotient(self, x, d, region: IndexRegion, tree):
        """x / d in C, x affine in the region's variables and >= 0, d > 0 free of them."""
        sympy = self.sympy
        variables = self.variables(region)
        ranges = [count for count, _ in region.levels] + [region.size]
        whole = sympy.Integer(0)
        partial = []
        rest = x
        for var, extent in zip(variables, ranges):
            coefficient = sympy.expand(x.coeff(var))
            rest = sympy.expand(rest - coefficient * var)
            if coefficient.free_symbols & set(variables):
                raise Refused(f"is not affine in j ({to_c(tree)})")
            if not self.nonnegative(coefficient):
                raise Refused(f"divides a term that falls as j grows ({to_c(tree)})")
            if self.is_zero(extent - 1) or self.is_zero(coefficient):
                continue
            ratio = sympy.cancel(coefficient / d)
            if ratio.is_polynomial(self.base) and all(
                    c.is_integer for c in sympy.Poly(ratio, self.base).all_coeffs()):
                whole += ratio * var
            else:
                partial.append((var, extent, coefficient))
        if not self.nonnegative(rest):
            raise Refused(f"divides a value that may be negative ({to_c(tree)})")
        start, offset = self.divide(rest, d, tree)     # rest = start d + offset, 0 <= offset < d
        largest = sum((c * (extent - 1) for _, extent, c in partial), sympy.Integer(0))
        if self.nonnegative(d - 1 - offset - largest):
            return sympy.expand(start + whole)
        if len(partial) > 1:
            raise Refused(f"wraps in two directions at once ({to_c(tree)})")
        if not self.is_zero(partial[0][2] - 1):
            raise Refused(f"steps by {self.shown(partial[0][2])} per component, which the "
                           f"split cannot divide by {self.shown(d)} ({to_c(tree)})")
        var, extent, _ = partial[0]
        if not self.is_zero(offset):
            at = sympy.expand(d - offset)
            if not self.nonnegative(extent - at):
                raise Refused(f"wraps at a component that is not inside the block for every n "
                               f"({to_c(tree)})")
            raise _Split(self.cut(region, var, at))
        if var == self.q:
            raise _Split(self.rows(region, d, tree))
        raise Refused(f"wraps more than once along a repeat ({to_c(tree)})")

    def divide(self, value, d, tree) -> tuple:
        """(start, offset) with value = start * d + offset and 0 <= offset < d at every n."""
        key = (self.sympy.expand(value), d)
        if key not in self.divided:
            self.divided[key] = self._divide(key[0], d, tree)
        return self.divided[key]

    def _divide(self, value, d, tree) -> tuple:
        sympy = self.sympy
        if d.is_Integer:
            poly = sympy.Poly(value, self.base)
            coefficients = poly.all_coeffs()
            if any(not c.is_integer or c % d for c in coefficients[:-1]):
                raise Refused(f"has a remainder modulo {self.shown(d)} that depends on n "
                               f"({to_c(tree)})")
            constant = int(coefficients[-1])
            offset = sympy.Integer(constant % int(d))
            return sympy.expand((value - offset) / d), offset
        try:
            start, offset = sympy.div(sympy.Poly(value, self.base), sympy.Poly(d, self.base))
        except (sympy.PolynomialError, ValueError):
            raise Refused(f"divides by {self.shown(d)}, which the split cannot take "
                           f"({to_c(tree)})") from None
        start, offset = start.as_expr(), offset.as_expr()
        if not self.nonnegative(offset):
            start, offset = start - 1, sympy.expand(offset + d)
        if not (self.nonnegative(offset) and self.nonnegative(d - 1 - offset)):
            raise Refused(f"has a remainder modulo {self.shown(d)} the split cannot bound "
                           f"({to_c(tree)})")
        if not all(c.is_integer for c in sympy.Poly(sympy.expand(start), self.base).all_coeffs()):
            raise Refused(f"has a quotient by {self.shown(d)} that is not an integer polynomial "
                           f"({to_c(tree)})")
        return sympy.expand(start), offset

    # blocks -------------------------------------------------------------------------------
    def pieces(self, block, indices: list) -> list:
        """(region, {index text: constant offset from j}) per piece of the block."""
        sympy = self.sympy
        levels = []
        for repeat, stride in ((block.outer_repeat, block.outer_stride),
                               (block.repeat, block.stride)):
            if repeat is not None:
                levels.append((self.size(repeat), self.size(stride)))
        work = [self.simplified(IndexRegion(self.size(block.first), tuple(levels),
                                        self.size(block.size)))]
        done = []
        while work:
            if len(work) + len(done) > MAX_PIECES:
                raise Refused(f"splits into more than {MAX_PIECES} blocks")
            region = work.pop(0)
            try:
                values = {to_c(index): self.value(index, region) for index in indices}
            except _Split as split:
                work[:0] = [self.simplified(r) for r in split.regions]
                continue
            j = sympy.expand(self.j_of(region))
            offsets = {}
            for text, value in values.items():
                offset = sympy.expand(value - j)
                for var, extent in zip(self.variables(region),
                                       [c for c, _ in region.levels] + [region.size]):
                    if self.is_zero(extent - 1):
                        offset = sympy.expand(offset.subs(var, 0))
                if offset.free_symbols - {self.base}:
                    raise Refused("is not j plus a constant on any block of the split")
                offsets[text] = offset
            done.append((region, offsets))
        return done

    def shown(self, expr) -> str:
        """expr as C text for a message (sympy's own text where it is no polynomial in n)."""
        try:
            return to_c(self.tree(expr))
        except (self.sympy.PolynomialError, ValueError, TypeError):
            return str(expr)

    def tree(self, expr):
        """A polynomial in the base size as an expression tree: integer multiples of the IVP's
        quantities where they leave integer coefficients (G - g + 1, N - 1), else in its name."""
        sympy = self.sympy
        rest = sympy.expand(expr)
        text = ""
        for name, value, degree in sorted(self.quantities(), key=lambda item: -item[2]):
            if sympy.degree(rest, self.base) != degree:
                continue
            multiple = sympy.Poly(rest, self.base).LC() / sympy.Poly(value, self.base).LC()
            if not multiple.is_integer:
                continue
            rest = sympy.expand(rest - multiple * value)
            term = name if abs(multiple) == 1 else f"{abs(multiple)} * {name}"
            text += (f"-{term}" if multiple < 0 else term) if not text else \
                f" {'-' if multiple < 0 else '+'} {term}"
        if not text or not all(c.is_integer for c in sympy.Poly(rest, self.base).all_coeffs()):
            return self.plain(expr)
        if rest != 0:
            shown = to_c(self.plain(rest))
            text += f" - {shown[1:]}" if shown.startswith("-") else f" + {shown}"
        return parse_expression(text)

    def quantities(self) -> list:
        """(name, value, degree in the base size) of the IVP's quantities that grow with n."""
        sympy = self.sympy
        for name in self.quantity_trees:
            try:
                self.size(Name(name))
            except Refused:
                continue            # not a polynomial in n: never printed
        return [(name, value, int(sympy.degree(value, self.base)))
                for name, value in self.defined.items()
                if name != self.base.name and value.free_symbols == {self.base}]

    def plain(self, expr):
        """A polynomial in the base size as an expression tree in its name."""
        sympy = self.sympy
        poly = sympy.Poly(sympy.expand(sympy.expand(expr).subs(self.to_printed)), self.printed)
        denominator = sympy.ilcm(1, *[sympy.fraction(c)[1] for c in poly.all_coeffs()])
        text = ""
        for (power,), coefficient in sorted(poly.terms(), reverse=True):
            coefficient = int(coefficient * denominator)
            factors = [self.printed.name] * power
            if abs(coefficient) != 1 or not factors:
                factors.insert(0, str(abs(coefficient)))
            term = " * ".join(factors)
            if not text:
                text = f"-{term}" if coefficient < 0 else term
            else:
                text += f" {'-' if coefficient < 0 else '+'} {term}"
        text = text or "0"
        if denominator != 1:
            text = f"({text}) / {denominator}"
        return parse_expression(text)
