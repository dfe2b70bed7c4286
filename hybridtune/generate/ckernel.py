"""C for one kernel variant, specialised on method and IVP: a function over a thread's components."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from hybridtune.describe.costs import sums_in
from hybridtune.describe.c_arithmetic import EvaluationError, Evaluator
from hybridtune.describe.expr import (Assign, Binary, Call, Cond, Index, Input, Name, Num, Rhs,
                                      Unary, rewrite, substitute, walk)
from hybridtune.describe.ivp import IVP
from hybridtune.describe.kernel import COMPONENT_LOOP, KernelTemplate
from hybridtune.describe.looplang import Directive, Loop
from hybridtune.describe.method import Method
from hybridtune.describe.printing import to_c
from hybridtune.errors import HybridtuneError

COEFFICIENTS = ("A", "b", "c")
STEP_SCALARS = ("t", "h")
IVP_PREFIX = "ivp_"
# loop-language pragmas and what gcc is told; the others (icc's nounroll_and_jam) have no gcc meaning
GCC_PRAGMAS = {"ivdep": "GCC ivdep", "novector": "GCC novector"}


class GenerationError(HybridtuneError):
    """A description the C generator cannot turn into code (the message says which and why)."""


@dataclass(frozen=True)
class KernelFunction:
    name: str
    params: tuple        # template array names, in signature order
    written: frozenset   # the params the kernel writes
    code: str


def literal(value: float) -> Num:
    return Num(float(value), repr(float(value)))


def _simplified(n):
    if isinstance(n, Unary) and n.op == "-" and isinstance(n.operand, Num):
        return literal(-n.operand.value)
    if not isinstance(n, Binary):
        return n
    zero = lambda x: isinstance(x, Num) and x.value == 0   # noqa: E731
    one = lambda x: isinstance(x, Num) and x.value == 1    # noqa: E731
    if n.op == "*" and (zero(n.left) or zero(n.right)):
        return literal(0.0)
    if n.op == "*" and one(n.left):
        return n.right
    if n.op in ("*", "/") and one(n.right):
        return n.left
    if n.op == "+" and zero(n.left):
        return n.right
    if n.op in ("+", "-") and zero(n.right):
        return n.left
    if n.op == "-" and zero(n.left):
        return Unary("-", n.right)
    return n


def simplify(node):
    """Drop terms with zero coefficients and unit factors (exact for finite values)."""
    return rewrite(node, _simplified)


def _select_bound(n):
    if isinstance(n, Call) and n.func in ("fmax", "fmin"):
        x, bound = n.args
        if isinstance(x, Num) and not isinstance(bound, Num):
            x, bound = bound, x
        if isinstance(bound, Num):
            op = ">" if n.func == "fmax" else "<"
            return Cond(Binary(op, x, bound), x, literal(bound.value))
    return n


def select_bounds(node):
    """fmax(x, L) / fmin(x, L) with a literal L as a comparison and select, which gcc vectorises
    without -ffast-math; the same value as fmax/fmin, NaN in x included (it yields L)."""
    return rewrite(node, _select_bound)


MAX_EXPANDED_POWER = 8


def _whole_power(n):
    if isinstance(n, Call) and n.func == "pow" and isinstance(n.args[1], Num):
        x, k = n.args[0], n.args[1].value
        if k == int(k) and 2 <= k <= MAX_EXPANDED_POWER:
            out = x
            for _ in range(int(k) - 1):
                out = Binary("*", out, x)
            return out
    return n


def integer_powers(node):
    """pow(x, k) with a literal whole k from 2 to MAX_EXPANDED_POWER as k - 1 multiplications.

    gcc keeps these as libm calls without -ffast-math (only pow(x, 2.0) is expanded), and a call
    costs tens of cycles where the product costs a few; gcc evaluates the repeated x once. The
    product differs from pow by a few ulp, which verification against the reference allows.
    """
    return rewrite(node, _whole_power)


def tidy(node):
    """simplify, integer_powers and select_bounds in one pass over the tree."""
    return rewrite(node, lambda n: _select_bound(_whole_power(_simplified(n))))


_NAMED: dict = {}        # id(ivp) -> (ivp, its names): a pool's variants ask for one IVP's alike
_NAMED_AT_MOST = 64


def ivp_names(ivp: IVP) -> dict:
    """IVP quantities, constants and the variables of its sums get a prefix so they never meet a
    kernel's names (a copy of the names kept for the IVP: walking its sums is the cost, and
    hashing an IVP would be another)."""
    kept = _NAMED.get(id(ivp))
    if kept is None or kept[0] is not ivp:
        if len(_NAMED) >= _NAMED_AT_MOST:
            _NAMED.clear()
        kept = _NAMED[id(ivp)] = (ivp, _prefixed(ivp))
    return dict(kept[1])


def _prefixed(ivp: IVP) -> dict:
    names = [q for q, _ in ivp.quantities] + [c for c, _ in ivp.constants]
    if ivp.sizes.root:
        names.append(ivp.sizes.root[0])
    names += [s.var.id for block in ivp.components for s in sums_in(block.code)]
    return {name: Name(IVP_PREFIX + name) for name in names}


def root_declaration(ivp: IVP) -> list[str]:
    """The grid's points per side (square_of, cube_of) from n, rounded against libm's error."""
    if not ivp.sizes.root:
        return []
    name, degree = ivp.sizes.root
    points = "n" if ivp.sizes.fields == 1 else f"(n / {ivp.sizes.fields})"
    function = "sqrt" if degree == 2 else "cbrt"
    return [f"const long {IVP_PREFIX}{name} = (long)({function}((double){points}) + 0.5);"]


def ivp_declarations(ivp: IVP) -> list[str]:
    """C declarations of the IVP's quantities and constants, computed from n."""
    rename = ivp_names(ivp)
    lines = root_declaration(ivp)
    for name, tree in ivp.quantities:
        lines.append(f"const long {IVP_PREFIX}{name} = {to_c(substitute(tree, rename))};")
    for name, tree in ivp.constants:
        lines.append(f"const double {IVP_PREFIX}{name} = {to_c(substitute(tree, rename))};")
    return lines


def block_loops(ivp: IVP, blocks: tuple, body, indent: str) -> list[str]:
    """One loop per component block, clipped to the thread's [lo, hi); body(block) gives its lines."""
    rename = ivp_names(ivp)
    out = []
    for block in blocks:
        first = to_c(substitute(block.first, rename))
        size = to_c(substitute(block.size, rename))
        inner = body(block)
        if block.repeat is None:
            out.append(f"{indent}for (long j = ht_max(lo, {first}); j < ht_min(hi, ({first}) + ({size})); ++j) {{")
            out += [indent + "    " + line for line in inner]
            out.append(indent + "}")
        else:
            repeat = to_c(substitute(block.repeat, rename))
            stride = to_c(substitute(block.stride, rename))
            at = indent
            if block.outer_repeat is not None:
                outer = to_c(substitute(block.outer_repeat, rename))
                first = f"{first} + ht_q * ({to_c(substitute(block.outer_stride, rename))})"
                out.append(f"{indent}for (long ht_q = 0; ht_q < {outer}; ++ht_q) {{")
                at = indent + "    "
            out.append(f"{at}for (long ht_r = 0; ht_r < {repeat}; ++ht_r) {{")
            out.append(f"{at}    const long ht_start = {first} + ht_r * ({stride});")
            out.append(f"{at}    for (long j = ht_max(lo, ht_start); j < ht_min(hi, ht_start + ({size})); ++j) {{")
            out += [at + "        " + line for line in inner]
            out.append(at + "    }")
            out.append(at + "}")
            if block.outer_repeat is not None:
                out.append(indent + "}")
    return out


class KernelWriter:
    def __init__(self, template: KernelTemplate, variant: str, method: Method, ivp: IVP):
        self.template = template
        self.program = template.variant(variant).program
        self.method = method
        self.ivp = ivp
        self.A, self.b, self.c = method.A, method.b, method.c
        self.arrays = {d.name: d for d in template.datastructs if d.dims}
        self.locals = {d.name: d for d in template.locals}
        self.rename = ivp_names(ivp)
        for decl in template.datastructs:
            if not decl.dims and decl.name not in STEP_SCALARS:
                raise GenerationError(f"{template.path}: scalar '{decl.name}' in datastructs is "
                                      "neither t nor h; per-thread scalars belong under 'locals'")
        self.params = tuple(name for name in self.arrays if name not in COEFFICIENTS)

    def constant(self, tree, values: dict):
        try:
            return int(Evaluator({**values, "s": self.method.stages})(tree))
        except (EvaluationError, TypeError, ValueError):
            return None

    # expressions ----------------------------------------------------------------------------
    def lower(self, tree, values: dict, block=None):
        """Substitute loop values, coefficients and %RHS; return a simplified tree."""
        mapping = {k: Num(v, str(v)) for k, v in values.items()}
        tree = substitute(tree, mapping)

        def coefficient(n):
            if isinstance(n, Index) and n.array in COEFFICIENTS:
                idx = [self.constant(i, {}) for i in n.indices]
                if all(i is not None for i in idx):
                    table = {"A": self.A, "b": self.b, "c": self.c}[n.array]
                    value = table[idx[0]][idx[1]] if n.array == "A" else table[idx[0]]
                    return literal(value)
                return Index("ht_" + n.array, n.indices)
            return n

        tree = rewrite(tree, coefficient)
        if any(isinstance(p, Rhs) for p in walk(tree)):
            if block is None:
                raise GenerationError(f"{self.template.path}: %RHS outside a loop over j")
            time = self.lower(self.template.rhs_time, values)
            vector = substitute(self.template.rhs_input, mapping)
            code = substitute(block.code, {**self.rename, "t": time})

            def expand(n):
                if isinstance(n, Input):
                    if isinstance(vector, Name):
                        return Index(vector.id, (n.index,))
                    return Index(vector.array, vector.indices + (n.index,))
                return n

            rhs = rewrite(code, expand)
            tree = rewrite(tree, lambda n: rhs if isinstance(n, Rhs) else n)
            tree = rewrite(tree, coefficient)
        return tidy(tree)

    def c_text(self, tree) -> str:
        def flat(n):
            if isinstance(n, Index) and n.array in self.arrays and len(n.indices) == 2:
                return Index(n.array, (Binary("+", Binary("*", n.indices[0], Name("n")),
                                              n.indices[1]),))
            return n
        return to_c(rewrite(tree, flat))

    # statements -----------------------------------------------------------------------------
    def lowered_statement(self, directive: Directive, values: dict, block) -> Assign | None:
        """A %COMP statement lowered for these loop values, or None where it does nothing."""
        statement: Assign = self.template.computation(directive.args[0])
        lowered = self.lower(statement, values, block)
        if lowered.op == "=" and lowered.value == lowered.target:
            return None
        if lowered.op == "+=" and isinstance(lowered.value, Num) and lowered.value.value == 0:
            return None
        return lowered

    def statement(self, directive: Directive, values: dict, block) -> list[str]:
        lowered = self.lowered_statement(directive, values, block)
        return [] if lowered is None else [self.c_text(lowered) + ";"]

    def items(self, items: tuple, values: dict, block) -> list[str]:
        out: list[str] = []
        for item in items:
            if isinstance(item, Directive):
                out += self.statement(item, values, block)
                continue
            out += self.loop(item, values, block)
        return out

    def loop(self, loop: Loop, values: dict, block) -> list[str]:
        if loop.var == COMPONENT_LOOP:
            if loop.lower != Num(0, "0") or loop.upper != Name("n"):
                raise GenerationError(f"{self.template.path}: the component loop must run over "
                                      "j from 0 to n")
            pragmas = self.pragmas(loop)
            if self.has_rhs(loop.body):
                lines = block_loops(self.ivp, self.ivp.affine_blocks,
                                    lambda b: self.items(loop.body, values, b), "")
                return self.with_pragmas(pragmas, lines)
            lines = ["for (long j = lo; j < hi; ++j) {"]
            lines += ["    " + line for line in self.items(loop.body, values, block)] + ["}"]
            return pragmas + lines
        lower, upper = self.constant(loop.lower, values), self.constant(loop.upper, values)
        if lower is None or upper is None:
            raise GenerationError(f"{self.template.path}: loop over {loop.var} needs bounds known "
                                  "from s (only the loop over j runs over n)")
        if upper - lower <= 0:
            return []
        if loop.unroll or upper - lower == 1:
            out = []
            for v in range(lower, upper):
                out += self.items(loop.body, {**values, loop.var: v}, block)
            return out
        body = self.items(loop.body, values, block)
        if not body:
            return []
        return self.pragmas(loop) + [f"for (long {loop.var} = {lower}; {loop.var} < {upper}; "
                                     f"++{loop.var}) {{"] + ["    " + line for line in body] + ["}"]

    @staticmethod
    def pragmas(loop: Loop) -> list[str]:
        lines = []
        for pragma in loop.pragmas:
            words = pragma.split()
            if words[0] in GCC_PRAGMAS:
                lines.append(f"#pragma {GCC_PRAGMAS[words[0]]}")
            elif words[0] == "unroll" and len(words) == 2 and words[1].isdigit():
                lines.append(f"#pragma GCC unroll {words[1]}")
        return lines

    @staticmethod
    def with_pragmas(pragmas: list[str], lines: list[str]) -> list[str]:
        """Put the loop's pragmas before every innermost component loop of the block split."""
        out = []
        for line in lines:
            if line.lstrip().startswith("for (long j ="):
                indent = line[: len(line) - len(line.lstrip())]
                out += [indent + p for p in pragmas]
            out.append(line)
        return out

    def has_rhs(self, items: tuple) -> bool:
        for item in items:
            if isinstance(item, Loop):
                if self.has_rhs(item.body):
                    return True
            elif any(isinstance(p, Rhs) for p in walk(self.template.computation(item.args[0]))):
                return True
        return False

    def written(self) -> frozenset:
        names = set()
        for ident, statement in self.template.computations:
            target = statement.target
            names.add(target.array if isinstance(target, Index) else target.id)
        return frozenset(names & set(self.params))

    def function(self, name: str) -> KernelFunction:
        written = self.written()
        params = ["long n", "long lo", "long hi", "double t", "double h"]
        for array in self.params:
            qualifier = "" if array in written else "const "
            params.append(f"{qualifier}double *restrict {array}")
        lines = [f"static void {name}({', '.join(params)})", "{"]
        body = []
        if self.template.evaluates_rhs:
            body += ivp_declarations(self.ivp)
        for decl in self.template.locals:
            dims = "".join(f"[{self.constant(d, {})}]" for d in decl.dims)
            body.append(f"double {decl.name}{dims};")
        body += self.items(self.program, {}, None)
        body += ["(void)t; (void)h; (void)n;"]
        lines += ["    " + line for line in body] + ["}"]
        return KernelFunction(name, self.params, written, "\n".join(lines))


@functools.lru_cache(maxsize=1024)
def kernel_function(template: KernelTemplate, variant: str, method: Method, ivp: IVP,
                    name: str) -> KernelFunction:
    """The C function of one kernel variant for this method and IVP; kept, since the variants of
    a pool share their kernels (32 variants of a skeleton use about 10 of them)."""
    return KernelWriter(template, variant, method, ivp).function(name)
