"""The records of a kerncraft form (its loops and what they stand for) and the counts that check it."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from hybridtune.describe.costs import operation_counts, weighted_operations
from hybridtune.describe.expr import Binary, Call, Cond, Index, Unary, walk
from hybridtune.describe.printing import to_c

ELEMENT_BYTES = 8


@dataclass(frozen=True)
class KerncraftPart:
    """One loop kerncraft can read, run `calls` times per kernel call."""
    code: str
    code_hash: str
    calls: int
    iterations: object          # sympy expression in n: the loop's trip count
    extents: tuple              # sympy expressions in n: elements of each array the loop touches
    defines: tuple              # integer names the code needs defined (n, IVP quantities)
    operations: int             # floating-point operations per iteration of this form
    loads: int                  # distinct array elements read per iteration
    source_operations: int      # the same two counts for the real kernel's statements
    source_loads: int
    block: int | None = None    # the IVP component block, for loops that evaluate the RHS

    @property
    def working_set_bytes(self):
        """Bytes of all arrays the loop touches, a sympy expression in n."""
        return ELEMENT_BYTES * sum(self.extents, sympy.Integer(0))


@dataclass(frozen=True)
class KerncraftForm:
    template: str
    variant: str
    method: str
    ivp: str                    # empty for kernels that evaluate no IVP
    parts: tuple
    omitted: tuple = ()         # what the form leaves out, and why


def value_operations(trees: list, int_names: set) -> int:
    """Operations of the statements' values, each math call at its CALL_OPERATIONS cost."""
    return sum(weighted_operations(operation_counts(t.value, int_names)) for t in trees)


def array_reads(trees: list, arrays: set) -> int:
    reads = {to_c(n) for t in trees for n in walk(t.value)
             if isinstance(n, Index) and n.array in arrays}
    for t in trees:
        if t.op == "+=" and isinstance(t.target, Index) and t.target.array in arrays:
            reads.add(to_c(t.target))
    return len(reads)


def outside_indices(tree, fn):
    """Apply fn bottom-up to the value part of a tree, not inside array subscripts."""
    if isinstance(tree, Index):
        return fn(tree)
    if isinstance(tree, Binary):
        return fn(Binary(tree.op, outside_indices(tree.left, fn), outside_indices(tree.right, fn)))
    if isinstance(tree, Unary):
        return fn(Unary(tree.op, outside_indices(tree.operand, fn)))
    if isinstance(tree, Call):
        return fn(Call(tree.func, tuple(outside_indices(a, fn) for a in tree.args)))
    if isinstance(tree, Cond):
        return fn(Cond(*(outside_indices(x, fn) for x in (tree.test, tree.then, tree.other))))
    return fn(tree)
