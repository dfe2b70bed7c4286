"""Static facts derived from expression trees: C types, operation counts, input reads."""

from __future__ import annotations

from collections import Counter

from hybridtune.describe.expr import (Binary, Call, Cond, Index, Input, Name, Num, Unary, children,
                                      walk)
from hybridtune.describe.printing import to_c

_ARITH = {"+": "add", "-": "add", "*": "mul", "/": "div"}


def static_is_int(node, int_names: set[str]) -> bool:
    """Whether C would give the expression an integer type, given the integer-typed names."""
    if isinstance(node, Num):
        return isinstance(node.value, int)
    if isinstance(node, Name):
        return node.id in int_names
    if isinstance(node, Unary):
        return node.op == "!" or static_is_int(node.operand, int_names)
    if isinstance(node, Binary):
        if node.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return True
        return static_is_int(node.left, int_names) and static_is_int(node.right, int_names)
    if isinstance(node, Cond):
        return static_is_int(node.then, int_names) and static_is_int(node.other, int_names)
    return False


def operation_counts(node, int_names: set[str] = frozenset()) -> Counter:
    """Floating-point operations of a tree: add, mul, div, cmp, select and one entry per math call.

    Both arms of a ?: are counted, as a vectorised select evaluates both; integer arithmetic
    (index and address computation) is not counted.
    """
    counts: Counter = Counter()

    def visit(part) -> None:
        if isinstance(part, (Index, Input)):
            return
        if isinstance(part, Binary) and not (static_is_int(part.left, int_names)
                                             and static_is_int(part.right, int_names)):
            counts[_ARITH.get(part.op, "cmp")] += 1
        elif isinstance(part, Call):
            counts[part.func] += 1
        elif isinstance(part, Cond):
            counts["select"] += 1
        for child in children(part):
            visit(child)

    visit(node)
    return counts


def flop_count(node, int_names: set[str] = frozenset()) -> int:
    """Additions, multiplications and divisions (a math call counts as one operation)."""
    counts = operation_counts(node, int_names)
    return sum(v for k, v in counts.items() if k not in ("select",))


def input_reads(node) -> tuple[str, ...]:
    """The distinct %in index expressions a tree reads, as C text, in first-use order."""
    seen: dict[str, None] = {}
    for part in walk(node):
        if isinstance(part, Input):
            seen.setdefault(to_c(part.index), None)
    return tuple(seen)


def input_index_trees(node) -> list:
    """The index trees of every %in read in a tree."""
    return [part.index for part in walk(node) if isinstance(part, Input)]
