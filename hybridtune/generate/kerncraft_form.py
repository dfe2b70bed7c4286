"""The kerncraft form of a kernel: plain loops, calls and ?: as arithmetic.

One plain loop per loop nest and component block.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import lru_cache

import sympy

from hybridtune.describe.costs import static_is_int
from hybridtune.describe.expr import (Assign, Binary, Call, Cond, Index, Name, Num, Unary, names,
                                      rewrite, substitute, walk)
from hybridtune.describe.ivp import IVP
from hybridtune.describe.ivp_block import Block
from hybridtune.describe.kernel import COMPONENT_LOOP, KernelTemplate
from hybridtune.describe.looplang import Directive, Loop
from hybridtune.describe.method import Method
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import IVP_PREFIX, GenerationError, KernelWriter, ivp_names
from hybridtune.generate.kerncraft_grid import grid_layout
from hybridtune.generate.kerncraft_parts import (ELEMENT_BYTES, KerncraftForm, KerncraftPart,
                                                 array_reads, outside_indices, value_operations)
from hybridtune.generate.kerncraft_sums import result_arrays, sum_part, take_sums
from hybridtune.generate.size_expressions import (N, as_arithmetic, spread, sympy_of, to_sympy,
                                                  vanishes)

__all__ = ["ELEMENT_BYTES", "KerncraftForm", "KerncraftPart", "kerncraft_form", "operation_totals"]


class _FormWriter:
    def __init__(self, template: KernelTemplate, variant: str, method: Method, ivp: IVP):
        self.template = template
        self.variant = variant
        self.method = method
        self.ivp = ivp
        self.writer = KernelWriter(template, variant, method, ivp)
        self.rename = ivp_names(ivp)
        self.int_names = {"j", "n"} | {r.id for r in self.rename.values()
                                       if r.id[len(IVP_PREFIX):] in ivp.int_names}
        self.arrays = set(self.writer.params)
        self.local_arrays = {d.name for d in template.locals if d.dims}
        self.index_symbols = {"j": sympy.Symbol("j", integer=True)}
        self.expansions = {}
        for name in sorted(self.int_names - {"j", "n"}):
            symbol = sympy.Symbol(name, positive=True, integer=True)
            self.index_symbols[name] = symbol
            self.expansions[symbol] = sympy_of(Name(name), ivp)
        self._indices: dict[str, object] = {}
        self._iterations: dict = {}
        self._subscripts: dict = {}
        self._printed: dict = {}
        self.parts: list[tuple] = []     # (trees, block number or None, Block or None)
        self.omitted: list[str] = []

    # structure --------------------------------------------------------------------------------
    def items(self, items: tuple, values: dict) -> None:
        for item in items:
            if isinstance(item, Directive):
                continue      # scalar work outside the component loop: no loop to model
            if item.var == COMPONENT_LOOP:
                self.component_loop(item, values)
                continue
            for v in self._range(item, values):
                self.items(item.body, {**values, item.var: v})

    def _range(self, loop: Loop, values: dict) -> range:
        lower = self.writer.constant(loop.lower, values)
        upper = self.writer.constant(loop.upper, values)
        if lower is None or upper is None:
            raise GenerationError(f"{self.template.path}: loop over {loop.var} needs bounds known "
                                  "from s")
        return range(lower, upper)

    def component_loop(self, loop: Loop, values: dict) -> None:
        if not self.writer.has_rhs(loop.body):
            self.parts.append((self.statements(loop.body, values, None), None, None))
            return
        blocks = self.ivp.affine_blocks
        for number, block in enumerate(blocks):
            label = f"component block {number}" if block.origin is None else \
                f"component block {block.origin}, piece " \
                f"{[b.origin for b in blocks[:number]].count(block.origin)} of its split at / and %"
            size = sympy_of(block.size, self.ivp)
            repeated = f", repeated {sympy_of(block.repeat, self.ivp)} times" \
                if block.repeat is not None else ""
            if block.outer_repeat is not None:
                repeated += f" in {sympy_of(block.outer_repeat, self.ivp)} planes"
            if N not in size.free_symbols:
                self.omitted.append(f"{label} (runs of {size} components"
                                    f"{repeated}: no loop whose length grows with n)")
                continue
            if self.vanishing(block):
                self.omitted.append(f"{label} ({size} components{repeated}: "
                                    "a share of n that vanishes as n grows)")
                continue
            self.parts.append((self.statements(loop.body, values, block), number, block))

    def vanishing(self, block: Block) -> bool:
        """Whether the block's components are a vanishing share of n (a grid's edge rows)."""
        return vanishes(self.block_iterations(block))

    def block_iterations(self, block: Block):
        if block not in self._iterations:
            size = sympy_of(block.size, self.ivp)
            if block.repeat is not None:
                size = size * sympy_of(block.repeat, self.ivp)
            if block.outer_repeat is not None:
                size = size * sympy_of(block.outer_repeat, self.ivp)
            self._iterations[block] = sympy.expand(size)
        return self._iterations[block]

    def statements(self, items: tuple, values: dict, block) -> list:
        out = []
        for item in items:
            if isinstance(item, Loop):
                if item.var == COMPONENT_LOOP:
                    raise GenerationError(f"{self.template.path}: a loop over j inside a loop over j")
                for v in self._range(item, values):
                    out += self.statements(item.body, {**values, item.var: v}, block)
                continue
            lowered = self.writer.lowered_statement(item, values, block)
            if lowered is not None:
                out.append(lowered)
        return out

    # one loop ---------------------------------------------------------------------------------
    def parts_of(self, trees: list, number, block) -> list[KerncraftPart]:
        """The loop of these statements and, after it, one nest per distinct sum they hold."""
        trees, sums = take_sums(trees)
        return [self.part(trees, number, block, result_arrays(sums))] + \
            [sum_part(self, reduction, number, block) for reduction in sums]

    def part(self, trees: list, number, block, results: set = frozenset()) -> KerncraftPart:
        """The loop of these statements (the results of sums read as arrays of their own)."""
        source_ops = value_operations(trees, self.int_names)
        source_loads = array_reads(trees, self.arrays | results)
        if block is None:
            start, iterations = Num(0, "0"), N
        else:
            start = substitute(block.first, self.rename)
            if block.repeat is not None:
                start = Binary("+", start, substitute(block.stride, self.rename))
            if block.outer_repeat is not None:
                start = Binary("+", start, substitute(block.outer_stride, self.rename))
            iterations = self.block_iterations(block)
        shift = {"j": Binary("+", Name("j"), start)} if block is not None else {}
        plain = [self.plain(t, shift) for t in trees]
        trip = substitute(block.size, self.rename) if block is not None else Name("n")
        code, extents, defines, loads = self.print_loop(plain, trip, iterations)
        return KerncraftPart(code, hashlib.sha256(code.encode()).hexdigest()[:16], 1, iterations,
                             extents, defines, value_operations(plain, self.int_names), loads,
                             source_ops, source_loads, number)

    def plain(self, tree: Assign, shift: dict) -> Assign:
        """Rows of s x n arrays as arrays of their own, locals as scalars, j shifted to the block."""
        if tree.op == "+=":
            tree = Assign(tree.target, "=", Binary("+", tree.target, tree.value))

        def rows(node):
            if isinstance(node, Index) and node.array in self.local_arrays:
                return Name(node.array + "_" + "_".join(to_c(i) for i in node.indices))
            if isinstance(node, Index) and node.array in self.arrays and len(node.indices) == 2:
                row = self.writer.constant(node.indices[0], {})
                if row is None:
                    raise GenerationError(f"{self.template.path}: row {to_c(node.indices[0])} "
                                          f"of {node.array} is not known from s")
                return Index(f"{node.array}_{row}", (substitute(node.indices[1], shift),))
            if isinstance(node, Index) and node.array in self.arrays:
                return Index(node.array, tuple(substitute(i, shift) for i in node.indices))
            return node

        value = as_arithmetic(self.integers_as_scalars(rewrite(tree.value, rows)))
        return Assign(rewrite(tree.target, rows), "=", value)

    def integers_as_scalars(self, tree):
        """Integer-typed parts of a value (N, 2 * N) as one scalar each: C computes them in integer
        registers, outside the floating-point count. A part in j (j + 1) becomes j: its conversion
        to double is per component, and where the target cannot vectorise that, the loop is scalar."""
        if isinstance(tree, Index) or isinstance(tree, Num):
            return tree
        if "j" in names(tree) and static_is_int(tree, self.int_names) \
                and not any(isinstance(x, Index) for x in walk(tree)):
            return Name("j")
        if static_is_int(tree, self.int_names) and names(tree) \
                and names(tree) <= self.int_names and not any(isinstance(x, Index) for x in walk(tree)):
            return Name("int_" + re.sub(r"\W+", "_", to_c(tree)))
        if isinstance(tree, Binary):
            return Binary(tree.op, self.integers_as_scalars(tree.left),
                          self.integers_as_scalars(tree.right))
        if isinstance(tree, Unary):
            return Unary(tree.op, self.integers_as_scalars(tree.operand))
        if isinstance(tree, Call):
            return Call(tree.func, tuple(self.integers_as_scalars(a) for a in tree.args))
        if isinstance(tree, Cond):
            return Cond(*(self.integers_as_scalars(x) for x in (tree.test, tree.then, tree.other)))
        return tree

    def index_of(self, tree):
        """A subscript as sympy, j and the IVP's integer quantities as symbols (memoised)."""
        key = to_c(tree)
        if key not in self._indices:
            self._indices[key] = to_sympy(tree, self.index_symbols)
        return self._indices[key]

    def row_layout(self, trees: list):
        """kerncraft splits subscripts only along declared dimensions: where subscripts carry a
        quantity q (j + 2 N), arrays are declared [n / q][q] and n in a subscript is written as
        (n / q) q; returns (q, n / q as sympy) or None."""
        symbols = set()
        for tree in trees:
            for node in walk(tree):
                if isinstance(node, Index):
                    for index in node.indices:
                        symbols |= self.index_of(index).free_symbols
        symbols -= {self.index_symbols["j"], N}
        if len(symbols) != 1:
            return None
        q = symbols.pop()
        expanded = sympy_of(Name(str(q)), self.ivp)
        rows = sympy.simplify(N / expanded)
        if rows.is_Integer and rows > 0:
            return q, rows
        if sympy.simplify(rows - expanded) == 0:
            return q, q
        return None

    def split_subscript(self, index, layout) -> tuple:
        """((offset from j in n, its order for large n), names to define, subscripts to print)."""
        key = (to_c(index), layout)
        if key not in self._subscripts:
            j = self.index_symbols["j"]
            expr = self.index_of(index)
            offset = sympy.expand(expr.subs(j, 0).subs(self.expansions))
            offset = (offset, (float(offset.coeff(N)), float(offset.subs(N, 0))))
            names = tuple(sorted(str(symbol) for symbol in expr.free_symbols - {j}))
            if layout is None:
                split = (index,)
            else:
                q, rows = layout
                expr = sympy.expand(expr.subs(N, rows * q))
                column = expr.subs(q, 0)
                split = (sympy.expand((expr - column) / q), column)
            self._subscripts[key] = (offset, names, split)
        return self._subscripts[key]

    def row_base(self, trees: list, layout):
        """The row the loop's rows are counted from: kerncraft's layer conditions need rows as
        small integers (a last row at q - 1 is row 1 above row q - 2), and only their distances
        matter for the cache model."""
        if layout is None:
            return 0
        rows = {self.split_subscript(index, layout)[2][0]
                for tree in trees for node in walk(tree) if isinstance(node, Index)
                for index in node.indices}
        q = layout[0]
        symbolic = {sympy.expand(row - row.subs(q, 0)) for row in rows}
        base = symbolic.pop() if len(symbolic) == 1 else sympy.Integer(0)
        lowest = min((row - base for row in rows if not (row - base).free_symbols), default=0)
        return base + min(lowest, 0)

    def printed_split(self, split: tuple, base) -> tuple:
        """A split subscript as names for printing, its row counted from `base` (memoised: sympy
        prints slowly)."""
        key = (split, base)
        if key not in self._printed:
            row, column = split
            self._printed[key] = (Name(str(sympy.expand(row - base))), Name(str(column)))
        return self._printed[key]

    def print_loop(self, trees: list, trip, iterations) -> tuple:
        """Canonical kerncraft C (arrays a0.., scalars s0.., literals k0.. by first use), the
        arrays' extents, the names to define and the array reads per iteration."""
        arrays: dict[str, str] = {}
        scalars: dict[str, str] = {}
        literals: dict[str, str] = {}
        defines: dict[str, None] = {}
        offsets: dict[str, list] = {}
        layout = self.row_layout(trees)
        base = self.row_base(trees, layout)
        grid = None if layout is not None else grid_layout(
            self.ivp, [self.index_of(i) for t in trees for node in walk(t) if isinstance(node, Index)
                       for i in node.indices], self.index_symbols)

        def subscript(index, array: str):
            offset, names, split = self.split_subscript(index, layout)
            offsets.setdefault(array, []).append(offset)
            for name in names:
                defines.setdefault(name, None)
            if grid is not None:
                defines.setdefault(grid.root, None)
                return grid.split(self.index_of(index))
            if layout is None:
                return split
            return self.printed_split(split, base)

        def canonical(node):
            if isinstance(node, Index):
                name = arrays.setdefault(node.array, f"a{len(arrays)}")
                return Index(name, tuple(x for index in node.indices for x in subscript(index, name)))
            if isinstance(node, Name) and node.id != "j":
                return Name(scalars.setdefault(node.id, f"s{len(scalars)}"))
            if isinstance(node, Num):
                return Name(literals.setdefault(node.text, f"k{len(literals)}"))
            return node

        body = []
        canonical_trees = []
        for tree in trees:
            value = outside_indices(tree.value, canonical)
            target = canonical(tree.target)
            canonical_trees.append(Assign(target, "=", value))
            body.append(f"  {to_c(target)} = {to_c(value)};")
        for part in walk(trip):
            if isinstance(part, Name):
                defines.setdefault(part.id, None)
        defines.setdefault("n", None)
        dims = "[n]" if layout is None else f"[{layout[1]}][{layout[0]}]"
        dims = grid.declaration if grid is not None else dims
        lines = [f"double {name}{dims};" for name in arrays.values()]
        lines += [f"double {name};" for name in list(scalars.values()) + list(literals.values())]
        lines.append(f"for (long j = 0; j < {to_c(trip)}; ++j) {{")
        lines += body + ["}"]
        extents = tuple(_extent(iterations, spread(offs)) for offs in offsets.values())
        loads = array_reads(canonical_trees, set(arrays.values()))
        return "\n".join(lines) + "\n", extents, tuple(defines), loads

    def form(self) -> KerncraftForm:
        self.items(self.writer.program, {})
        merged: dict[str, KerncraftPart] = {}
        for trees, number, block in self.parts:
            if not trees:
                continue
            for part in self.parts_of(trees, number, block):
                if part.code_hash in merged:
                    first = merged[part.code_hash]
                    merged[part.code_hash] = KerncraftPart(**{**first.__dict__,
                                                              "calls": first.calls + 1})
                else:
                    merged[part.code_hash] = part
        ivp = self.ivp.name if self.template.evaluates_rhs else ""
        return KerncraftForm(self.template.name, self.variant, self.method.name, ivp,
                             tuple(merged.values()), tuple(self.omitted))


def kerncraft_form(template: KernelTemplate, variant: str, method: Method, ivp: IVP) -> KerncraftForm:
    """The kerncraft form of one kernel variant for this method (and IVP, where it evaluates one)."""
    return _FormWriter(template, variant, method, ivp).form()


def operation_totals(form: KerncraftForm) -> Counter:
    """Operations and loads per kernel call, summed over the parts at trip count 1 per part."""
    totals: Counter = Counter()
    for part in form.parts:
        totals["operations"] += part.calls * part.operations
        totals["source_operations"] += part.calls * part.source_operations
        totals["loads"] += part.calls * part.loads
        totals["source_loads"] += part.calls * part.source_loads
    return totals


@lru_cache(maxsize=4096)
def _extent(iterations, spread_of_offsets):
    """The components of an array a loop touches: min(n, iterations + spread), kept per process
    (sympy's Min compares its arguments anew each time it is built)."""
    return sympy.Min(N, iterations + spread_of_offsets)
