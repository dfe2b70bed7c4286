"""Sums in the kerncraft form: an array of their own, read in the component loop.

Each sum is computed in a loop nest of its own.
"""

from __future__ import annotations

import hashlib

import sympy

from hybridtune.describe.costs import sum_operations, weighted_operations
from hybridtune.describe.expr import (
    Assign,
    Binary,
    Index,
    Name,
    Num,
    Sum,
    names,
    rewrite,
    substitute,
    walk,
)
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import GenerationError
from hybridtune.generate.kerncraft_parts import (
    KerncraftPart,
    array_reads,
    outside_indices,
    value_operations,
)
from hybridtune.generate.size_expressions import as_arithmetic, sympy_of, to_sympy

RESULT = "ht_red_"          # ht_red_<i>[j]: the value of the part's i-th distinct sum at component j
OUTER, INNER = "j", "k"     # the nest's loops: over the block's components, over the sum's terms


def take_sums(trees: list) -> tuple[list, list]:
    """The statements with each sum(...) read from an array RESULT<i>[j] instead (i numbers the
    distinct sums by first use), and those sums."""
    found: dict[str, Sum] = {}

    def replace(node):
        if isinstance(node, Sum):
            key = to_c(node)
            found.setdefault(key, node)
            return Index(f"{RESULT}{list(found).index(key)}", (Name(OUTER),))
        return node

    return [rewrite(tree, replace) for tree in trees], list(found.values())


def result_arrays(sums: list) -> set[str]:
    return {f"{RESULT}{i}" for i in range(len(sums))}


class _Reads:
    """Each %in read of a sum's body by the loop that moves it: a read at k + c as an array of
    its own indexed by k (rows of a blocked layout are disjoint contiguous segments, so it walks
    one segment whatever c is), a read at j + c as a scalar (the inner loop does not move it;
    the compiler loads it once per component)."""

    def __init__(self, writer, reduction: Sum):
        self.writer = writer
        self.reduction = reduction
        self.symbols = {**writer.index_symbols, INNER: sympy.Symbol(INNER, integer=True)}
        self.names: dict[tuple, str] = {}       # (row array, loop, offset) -> name
        self.per_component: list[str] = []      # the names of reads at j + c

    def __call__(self, node):
        writer = self.writer
        if isinstance(node, Name) and node.id == self.reduction.var.id:
            return Name(INNER)
        if isinstance(node, Index) and node.array in writer.local_arrays:
            return Name(node.array + "_" + "_".join(to_c(i) for i in node.indices))
        if not (isinstance(node, Index) and node.array in writer.arrays):
            return node
        if len(node.indices) == 2:
            row = writer.writer.constant(node.indices[0], {})
            if row is None:
                raise GenerationError(f"{writer.template.path}: row {to_c(node.indices[0])} of "
                                      f"{node.array} is not known from s")
            base, column = f"{node.array}_{row}", node.indices[1]
        else:
            base, column = node.array, node.indices[-1]
        loop, offset = self.loop_and_offset(column)
        key = (base, loop, str(offset))
        if key not in self.names:
            self.names[key] = f"{base}_{loop}{len(self.names)}"
            if loop == OUTER:
                self.per_component.append(self.names[key])
        if loop == OUTER:
            return Name(self.names[key])
        return Index(self.names[key], (Name(INNER),))

    def loop_and_offset(self, column) -> tuple[str, object]:
        expr = to_sympy(column, self.symbols)
        loops = {self.symbols[INNER], self.symbols[OUTER]}
        for loop in (INNER, OUTER):
            offset = sympy.expand(expr - self.symbols[loop])
            if not offset.free_symbols & loops:
                return loop, offset
        var = self.reduction.var.id.removeprefix("ivp_")
        shown = to_c(substitute(column, {INNER: Name(var)}))
        raise GenerationError(
            f"{self.writer.template.path}: IVP {self.writer.ivp.name}: the kerncraft form of "
            f"sum over {var} reads %in[{shown}]; it takes only reads at {var} + offset or "
            "j + offset (an offset in n and the integer quantities)")


def sum_part(writer, reduction: Sum, number: int, block) -> KerncraftPart:
    """The nest `for j < M: for k < K: a0[k] = a0[k - 1] + BODY` of one sum over a block of M
    components, K terms each; `iterations` counts its M * K terms.

    The real code adds the terms in a register, a chain no compiler vectorises without
    reassociation. kerncraft reads neither a register sum (it finds no store to time the loop
    by) nor a[j] += .. over k (its layer conditions refuse a subscript in the outer loop alone),
    so the sum runs along an array of K partial sums: the same chain of additions, one store
    per term into an array that stays in L1. Reads at j + c are scalars, as in the real loop.
    """
    reads = _Reads(writer, reduction)
    body = as_arithmetic(writer.integers_as_scalars(rewrite(reduction.body, reads)))
    value = Binary("+", Index(RESULT, (Name(f"{INNER} - 1"),)), body)

    arrays: dict[str, str] = {RESULT: "a0"}
    scalars: dict[str, str] = {}
    literals: dict[str, str] = {}

    def canonical(node):
        if isinstance(node, Index):
            return Index(arrays.setdefault(node.array, f"a{len(arrays)}"), node.indices)
        if isinstance(node, Name) and node.id not in (OUTER, INNER):
            return Name(scalars.setdefault(node.id, f"s{len(scalars)}"))
        if isinstance(node, Num):
            return Name(literals.setdefault(node.text, f"k{len(literals)}"))
        return node

    printed = Assign(Index("a0", (Name(INNER),)), "=", outside_indices(value, canonical))
    trips = {OUTER: substitute(block.size, writer.rename),
             INNER: reduction.upper if reduction.lower == Num(0, "0")
             else Binary("-", reduction.upper, reduction.lower)}
    lines = [f"double {name}[{to_c(trips[INNER])}];" for name in arrays.values()]
    lines += [f"double {name};" for name in list(scalars.values()) + list(literals.values())]
    lines += [f"for (long {OUTER} = 0; {OUTER} < {to_c(trips[OUTER])}; ++{OUTER}) {{",
              f"  for (long {INNER} = 0; {INNER} < {to_c(trips[INNER])}; ++{INNER}) {{",
              f"    {to_c(printed.target)} = {to_c(printed.value)};", "  }", "}"]
    code = "\n".join(lines) + "\n"

    defines = {part.id: None for trip in trips.values() for part in walk(trip)
               if isinstance(part, Name)}
    defines.setdefault("n", None)
    terms, components = sympy_of(trips[INNER], writer.ivp), sympy_of(trips[OUTER], writer.ivp)
    iterations = sympy.expand(writer.block_iterations(block) * terms)
    extents = (terms,) * len(arrays) + (components,) * len(reads.per_component)
    moving = {to_c(node) for node in walk(reduction.body) if isinstance(node, Index)
              and node.array in writer.arrays and reduction.var.id in names(node)}
    return KerncraftPart(code, hashlib.sha256(code.encode()).hexdigest()[:16], 1, iterations,
                         extents, tuple(defines),
                         value_operations([printed], writer.int_names | {INNER}),
                         array_reads([printed], set(arrays.values())),
                         weighted_operations(sum_operations(reduction, writer.int_names)),
                         len(moving) + 1, number)
