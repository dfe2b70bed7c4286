"""Static facts derived from expression trees: C types, operation counts, input reads."""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from hybridtune.describe.expr import (Binary, Call, Cond, Index, Input, Name, Num, Sum, Unary,
                                      children, walk)
from hybridtune.describe.printing import to_c

_ARITH = {"+": "add", "-": "add", "*": "mul", "/": "div"}

# What one call of a math.h function costs, in double-precision operations of a typical libm
# (glibc's, scalar): range reduction, a polynomial and the reconstruction. docs/models.md
# ("Transcendental calls") gives the reasoning; the kerncraft form spends this many operations on
# each call it cannot show kerncraft.
EXP_OPERATIONS = 20         # x = k ln2 / 128 + r, a degree-5 polynomial in r, a table's 2^(k/128)
LOG_OPERATIONS = 20         # z = 2^k m, a table's 1/c, r = m / c - 1, a degree-6 polynomial, k ln2
TRIG_OPERATIONS = 25        # Cody-Waite reduction by pi/2, a degree-7/8 polynomial, the quadrant
CALL_OPERATIONS = {
    "exp": EXP_OPERATIONS,
    "log": LOG_OPERATIONS,
    "log10": LOG_OPERATIONS + 1,                       # log times 1 / ln 10
    "pow": LOG_OPERATIONS + EXP_OPERATIONS + 1,        # exp(y log x)
    "sin": TRIG_OPERATIONS, "cos": TRIG_OPERATIONS,
    "tan": TRIG_OPERATIONS + 5,                        # a rational approximation: one division more
    "asin": TRIG_OPERATIONS, "acos": TRIG_OPERATIONS,  # a polynomial, sqrt near |x| = 1
    "atan": TRIG_OPERATIONS,                           # reduction by 1/x and a table, a polynomial
    "atan2": TRIG_OPERATIONS + 5,                      # atan of y / x and the quadrant
    "sinh": EXP_OPERATIONS + 5, "cosh": EXP_OPERATIONS + 5,   # (e^x -+ e^-x) / 2 from one exp
    "tanh": EXP_OPERATIONS + 5,                        # (e^2x - 1) / (e^2x + 1) from one exp
    "sqrt": 1,                                         # one hardware instruction
    "fabs": 1, "fmax": 1, "fmin": 1, "floor": 1, "ceil": 1,
}


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
    (index and address computation) is not counted. A sum(...) is not counted here: its body
    runs once per value of its variable (sum_operations gives the operations of one).
    """
    counts: Counter = Counter()

    def visit(part) -> None:
        if isinstance(part, (Index, Input, Sum)):
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


def weighted_operations(counts: Counter) -> int:
    """Operations with each math call at its CALL_OPERATIONS cost (a select is one operation)."""
    return sum(CALL_OPERATIONS.get(key, 1) * value for key, value in counts.items())


def sums_in(node) -> list:
    """The sum(...) nodes of a tree, in first-use order."""
    return [part for part in walk(node) if isinstance(part, Sum)]


def sum_operations(node: Sum, int_names: set[str] = frozenset()) -> Counter:
    """Operations of one term of a sum: its body and the addition that accumulates it."""
    counts = operation_counts(node.body, set(int_names) | {node.var.id})
    counts["add"] += 1
    return counts


def outside_sums(node) -> Iterator:
    """Every node of a tree outside the sums it holds (a sum itself is yielded, not its parts)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, Sum):
            stack.extend(reversed(children(current)))


def input_reads(node) -> tuple[str, ...]:
    """The distinct %in index expressions a tree reads outside its sums, as C text, in first-use
    order (input_reads(a_sum.body) gives a sum's)."""
    seen: dict[str, None] = {}
    for part in outside_sums(node):
        if isinstance(part, Input):
            seen.setdefault(to_c(part.index), None)
    return tuple(seen)


def input_index_trees(node) -> list:
    """(index tree, the sum it lies in or None) for every %in read in a tree."""
    found = [(part.index, None) for part in outside_sums(node) if isinstance(part, Input)]
    for reduction in sums_in(node):
        found += [(part.index, reduction) for part in walk(reduction.body)
                  if isinstance(part, Input)]
    return found
