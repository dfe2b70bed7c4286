"""Blocks whose %in indices use /, % or conditions on j, split into blocks of j plus a constant."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hybridtune.describe.costs import input_index_trees, outside_sums
from hybridtune.describe.c_arithmetic import EvaluationError
from hybridtune.describe.expr import Binary, Cond, Input, Name, Unary, rewrite, walk
from hybridtune.describe.ivp_checks import component_reads, names_in
from hybridtune.describe.ivp_block import Block
from hybridtune.describe.printing import to_c
from hybridtune.describe.region_split import (COMPARISONS, LOGICAL, SPLITTING, Refused, IndexRegion,
                                              Splitter)


@dataclass(frozen=True)
class Refusal:
    """A component block the split cannot make affine: its number, the %in index and why."""
    block: int
    index: str
    reason: str

    def __str__(self) -> str:
        return f"component block {self.block}: %in[{self.index}] {self.reason}"


def needs_split(index) -> bool:
    """Whether an index applies / or % to an expression in j, or tests a condition on j."""
    for part in walk(index):
        if isinstance(part, Binary) and part.op in SPLITTING + COMPARISONS + LOGICAL \
                and "j" in names_in(part):
            return True
        if isinstance(part, (Cond, Unary)) and "j" in names_in(part) and \
                (isinstance(part, Cond) or part.op == "!"):
            return True
    return False


def split_indices(code) -> list:
    """The %in indices of a block's code (outside sums) that need the split."""
    return [p.index for p in outside_sums(code) if isinstance(p, Input) and needs_split(p.index)]


def unsplittable_sum_reads(code) -> list:
    """%in indices inside sums that use / or % or a condition on j or the sum's variable."""
    found = []
    for index, reduction in input_index_trees(code):
        if reduction is None:
            continue
        for part in walk(index):
            if isinstance(part, Cond) or (isinstance(part, Unary) and part.op == "!") or (
                    isinstance(part, Binary) and part.op in SPLITTING + COMPARISONS + LOGICAL
                    and names_in(part) & {"j", reduction.var.id}):
                found.append(index)
                break
    return found


def _plus(splitter, offset):
    """j + offset as a tree (j - c where the offset's leading term is negative)."""
    sympy = splitter.sympy
    offset = sympy.expand(offset)
    if offset == 0:
        return Name("j")
    leading = sympy.Poly(offset, splitter.base).LC()
    if leading < 0:
        return Binary("-", Name("j"), splitter.tree(-offset))
    return Binary("+", Name("j"), splitter.tree(offset))


def _rewritten(code, indices: dict):
    def fn(node):
        if isinstance(node, Input) and to_c(node.index) in indices:
            return Input(indices[to_c(node.index)])
        return node
    return rewrite(code, fn)


def split_blocks(ivp) -> tuple | Refusal:
    """The IVP's component blocks with every block whose indices need the split replaced by its
    pieces (each a Block whose `origin` is the number of the block it came from), or a Refusal."""
    out = []
    splitter = None
    for number, block in enumerate(ivp.components):
        indices = split_indices(block.code)
        if not indices:
            out.append(block)
            continue
        first = to_c(indices[0])
        try:
            splitter = splitter or Splitter(ivp)
            found = splitter.pieces(block, indices)
            pieces = [_piece(splitter, block, number, region, offsets)
                      for region, offsets in found]
        except Refused as exc:
            named = _failing(splitter, block, indices) if splitter else None
            return Refusal(number, named or first, str(exc))
        problem = _disagreement(ivp, block, pieces)
        if problem:
            return Refusal(number, first, problem)
        env = ivp.environment(ivp.sizes.samples()[-1])
        out += sorted(pieces, key=lambda piece: piece.starts(env)[0])
    return tuple(out)


def _failing(splitter, block, indices) -> str | None:
    """The first index that refuses on its own (the one to name)."""
    for index in indices:
        try:
            splitter.pieces(block, [index])
        except Refused:
            return to_c(index)
    return None


def _piece(splitter, block, number, region: IndexRegion, offsets: dict):
    levels = list(region.levels)
    inner = levels.pop() if levels else (None, None)
    outer = levels.pop() if levels else (None, None)
    tree = splitter.tree
    code = _rewritten(block.code, {text: _plus(splitter, value) for text, value in offsets.items()})
    return Block(tree(region.first), tree(region.size), code,
                 None if inner[0] is None else tree(inner[0]),
                 None if inner[1] is None else tree(inner[1]), block.line,
                 None if outer[0] is None else tree(outer[0]),
                 None if outer[1] is None else tree(outer[1]), number)


def _disagreement(ivp, block, pieces: list) -> str | None:
    """At each sample size, the pieces cover the block's components once and read what it reads."""
    for n in ivp.sizes.samples():
        try:
            why = _disagreement_at(ivp.environment(n), block, pieces)
        except EvaluationError as exc:
            return f"splits into blocks that do not evaluate at n = {n} ({exc})"
        if why:
            return f"splits into blocks that {why} at n = {n}"
    return None


def _disagreement_at(env, block, pieces: list) -> str | None:
    """How the pieces disagree with the block in one environment (None: they agree)."""
    js = block.indices(env)
    covered = np.concatenate([p.indices(env) for p in pieces]) if pieces else js[:0]
    if len(covered) != len(js) or not np.array_equal(np.sort(covered), np.sort(js)):
        return "do not cover the block"
    for piece in pieces:
        mine = piece.indices(env)
        if len(mine) and not all(np.array_equal(split, original) for split, original in zip(
                component_reads(piece.code, env, mine), component_reads(block.code, env, mine))):
            return "read other components"
    return None
