"""Sums in the kerncraft form: a read of an array of their own in the component loop, and a loop nest of their own."""

from __future__ import annotations

import hashlib

import sympy

from hybridtune.describe.costs import sum_operations, weighted_operations
from hybridtune.describe.expr import Assign, Binary, Index, Name, Num, Sum, rewrite, substitute, walk
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import GenerationError
from hybridtune.generate.kerncraft_parts import KerncraftPart, array_reads, value_operations
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
    """Each %in read of a sum's body as a 1-d array of its own, indexed by k or j: rows of a
    blocked layout are disjoint contiguous segments, so a read at k + c walks one segment with k
    (and one at j + c another with j), whatever c is."""

    def __init__(self, writer, reduction: Sum):
        self.writer = writer
        self.reduction = reduction
        self.symbols = {**writer.index_symbols, INNER: sympy.Symbol(INNER, integer=True)}
        self.arrays: dict[tuple, str] = {}     # (row array, loop, offset) -> array name
        self.loop_of: dict[str, str] = {}      # array name -> the loop that indexes it

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
        name = self.arrays.setdefault((base, loop, str(offset)), f"{base}_{loop}{len(self.arrays)}")
        self.loop_of[name] = loop
        return Index(name, (Name(loop),))

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
    """The nest `for j < M: for k < K: a0[j] = a0[j] + BODY` of one sum over a block of M
    components, K terms each: `iterations` counts M * K body evaluations."""
    reads = _Reads(writer, reduction)
    body = as_arithmetic(writer.integers_as_scalars(rewrite(reduction.body, reads)))
    target = Index(RESULT, (Name(OUTER),))
    statement = Assign(target, "=", Binary("+", target, body))

    arrays: dict[str, str] = {}
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

    value = rewrite(statement.value, canonical)
    printed = Assign(rewrite(statement.target, canonical), "=", value)
    loop_of = {arrays[name]: loop for name, loop in reads.loop_of.items() if name in arrays}
    loop_of[arrays[RESULT]] = OUTER

    trips = {OUTER: substitute(block.size, writer.rename),
             INNER: reduction.upper if reduction.lower == Num(0, "0")
             else Binary("-", reduction.upper, reduction.lower)}
    lines = [f"double {name}[{to_c(trips[loop_of[name]])}];" for name in arrays.values()]
    lines += [f"double {name};" for name in list(scalars.values()) + list(literals.values())]
    lines += [f"for (long {OUTER} = 0; {OUTER} < {to_c(trips[OUTER])}; ++{OUTER}) {{",
              f"  for (long {INNER} = 0; {INNER} < {to_c(trips[INNER])}; ++{INNER}) {{",
              f"    {to_c(printed.target)} = {to_c(printed.value)};", "  }", "}"]
    code = "\n".join(lines) + "\n"

    defines = {part.id: None for trip in trips.values() for part in walk(trip)
               if isinstance(part, Name)}
    defines.setdefault("n", None)
    terms = sympy_of(trips[INNER], writer.ivp)
    iterations = sympy.expand(writer.block_iterations(block) * terms)
    extents = tuple(sympy_of(trips[loop_of[name]], writer.ivp) for name in arrays.values())
    int_names = writer.int_names | {INNER}
    source = Assign(Index(RESULT, (Name(OUTER),)), "+=", reduction.body)
    source_loads = array_reads([source], writer.arrays | {RESULT})
    return KerncraftPart(code, hashlib.sha256(code.encode()).hexdigest()[:16], 1, iterations,
                         extents, tuple(defines), value_operations([printed], int_names),
                         array_reads([printed], set(arrays.values())),
                         weighted_operations(sum_operations(reduction, writer.int_names)),
                         source_loads, number)
