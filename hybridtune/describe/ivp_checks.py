"""Checks of an IVP's code and blocks: the names and %in reads a tree may use, the cover of 0..n-1."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from hybridtune.describe.costs import (
    input_index_trees,
    outside_sums,
    static_is_int,
    sums_in,
)
from hybridtune.describe.c_arithmetic import EvaluationError, Evaluator
from hybridtune.describe.expr import (
    MATH_CONSTANTS,
    RESERVED_NAMES,
    Binary,
    Call,
    Cond,
    Input,
    Name,
    Num,
    Sum,
    Unary,
    walk,
)
from hybridtune.describe.source import Node

RESERVED = {"j", "n", "t"} | set(MATH_CONSTANTS) | RESERVED_NAMES


def names_in(tree) -> set[str]:
    return {p.id for p in walk(tree) if isinstance(p, Name)}


def check_tree(node: Node, tree, allowed: set[str], int_names: set[str], *, inputs: bool,
               what: str) -> None:
    """Refuse a tree that uses names outside `allowed`, %in where there is no input vector, or
    %in indices and '%' operands that are not integers; a sum's body may use its variable."""
    for reduction in sums_in(tree):
        _check_sum(node, reduction, allowed, int_names, inputs=inputs, what=what)
    for part in outside_sums(tree):
        if isinstance(part, Sum):
            continue
        if isinstance(part, Name) and part.id not in allowed and part.id not in MATH_CONSTANTS:
            raise node.error(f"{what} using only {', '.join(sorted(allowed)) or 'numbers'} "
                             f"(undefined name '{part.id}')")
        if isinstance(part, Input):
            if not inputs:
                raise node.error(f"{what} without %in (it is read only in component code)")
            if not static_is_int(part.index, int_names):
                raise node.error(f"{what} whose %in indices are integer expressions in j, n and "
                                 "the integer quantities")
            if names_in(part.index) - int_names:
                raise node.error(f"{what} whose %in indices use only j, n and integer quantities "
                                 f"(not {', '.join(sorted(names_in(part.index) - int_names))})")
        if isinstance(part, Binary) and part.op == "%" and not (
                static_is_int(part.left, int_names) and static_is_int(part.right, int_names)):
            raise node.error(f"{what} applying '%' to integer operands only (fmod is not "
                             "offered; C's % needs integers)")
        if not isinstance(part, (Num, Name, Binary, Unary, Call, Cond, Input)):
            raise node.error(f"{what} without array references or %RHS")


def _check_sum(node: Node, reduction: Sum, allowed: set[str], int_names: set[str], *,
               inputs: bool, what: str) -> None:
    """sum(k, LO, HI, BODY): only in component code, k a new name, LO and HI integers in n and
    the integer quantities (not j), BODY component code that may use k as an integer."""
    if not inputs:
        raise node.error(f"{what} without sum(...) (a reduction over components belongs in "
                         "component code)")
    var = reduction.var.id
    if var in allowed or var in int_names or var in RESERVED:
        raise node.error(f"{what} whose sum variable is a new name (not j, n, t, a quantity, a "
                         f"constant or a reserved name)", value=var)
    bounds = int_names - {"j"}
    for bound in (reduction.lower, reduction.upper):
        check_tree(node, bound, bounds, bounds, inputs=False, what="a sum bound")
        if not static_is_int(bound, bounds):
            raise node.error("sum bounds of integer type (integer expressions in n and the "
                             f"integer quantities, not j): {var} runs from LO to HI - 1")
    check_tree(node, reduction.body, allowed | {var}, int_names | {var}, inputs=inputs,
               what=what)


def component_reads(code, env: dict, js: np.ndarray, in_sums: bool = False) -> Iterator:
    """The components each %in of the code reads, for every j of js (one array per read; a read
    inside a sum once at each end of the sum's range, none where the range is empty); with
    in_sums, (array, whether the read is inside a sum) pairs."""
    for index, reduction in input_index_trees(code):
        if reduction is None:
            reads = np.asarray(Evaluator({**env, "j": js})(index)) * np.ones_like(js)
            yield (reads, False) if in_sums else reads
            continue
        lower, upper = Evaluator(env).bounds(reduction)
        for k in sorted({lower, upper - 1}) if upper > lower else ():
            values = {**env, "j": js, reduction.var.id: k}
            reads = np.asarray(Evaluator(values)(index)) * np.ones_like(js)
            yield (reads, True) if in_sums else reads


def check_cover(node: Node, blocks: tuple, env: dict, n: int) -> None:
    """The blocks cover components 0..n-1 in order, without gap or overlap."""
    spans = []
    for number, block in enumerate(blocks):
        where = node.child(number)
        try:
            size = int(Evaluator(env)(block.size))
            for key, count in zip(("outer_repeat", "repeat"), block.repeats(env)):
                if not 0 <= count <= n:
                    raise where.child(key).error(f"a repeat count between 0 and n at n = {n} "
                                                 f"(it is {count})")
            if block.count(env) > n:
                raise where.child("outer_repeat").error(
                    f"repeat counts whose product is at most n at n = {n} (it is "
                    f"{block.count(env)})")
            if not 0 <= size <= n:
                raise where.child("size").error(f"a size between 0 and n at n = {n} (it is {size})")
            starts = block.starts(env)
        except EvaluationError as exc:
            raise where.error(f"bounds that evaluate at n = {n} ({exc})") from None
        spans += [(start, start + size, number) for start in starts if size > 0]
    spans.sort()
    expected = 0
    for start, stop, number in spans:
        if start != expected:
            kind = "a gap" if start > expected else "an overlap"
            raise node.child(number).child("first").error(
                f"blocks covering components 0..n-1 in order without gap or overlap: at n = {n} "
                f"this block starts at component {start} where {expected} was due ({kind})")
        expected = stop
    if expected != n:
        raise node.error(f"blocks covering components 0..n-1: at n = {n} they end at component "
                         f"{expected}")


def check_reads(node: Node, blocks: tuple, env: dict, n: int) -> None:
    """Every %in index lies within 0..n-1 (inside a sum: at both ends of its range)."""
    for number, block in enumerate(blocks):
        js = block.indices(env)
        if not len(js):
            continue
        every = component_reads(block.code, env, js)
        while True:
            try:
                reads = next(every, None)
            except EvaluationError as exc:
                raise node.child(number).child("code").error(
                    f"%in indices that evaluate at n = {n} ({exc})") from None
            if reads is None:
                break
            bad = (reads < 0) | (reads >= n)
            if np.any(bad):
                j = int(js[np.argmax(bad)])
                raise node.child(number).child("code").error(
                    f"%in indices within 0..n-1: at n = {n}, j = {j} it reads component "
                    f"{int(reads[np.argmax(bad)])}")
