"""Expression trees: the node records, and the walks that read and rebuild them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from hybridtune.errors import HybridtuneError


class ExpressionError(HybridtuneError):
    """A code string that is not a valid expression; `column` is 1-based."""

    def __init__(self, reason: str, column: int | None = None):
        self.reason = reason
        self.column = column
        super().__init__(reason if column is None else f"{reason} (column {column})")


@dataclass(frozen=True)
class Num:
    value: int | float
    text: str


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Index:
    """An array reference such as F[i][j]."""
    array: str
    indices: tuple


@dataclass(frozen=True)
class Input:
    """%in[INDEX]: a component of the IVP's input vector."""
    index: object


@dataclass(frozen=True)
class Rhs:
    """%RHS in a kernel computation: the IVP's component code at component j."""


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple


@dataclass(frozen=True)
class Unary:
    op: str
    operand: object


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Cond:
    test: object
    then: object
    other: object


@dataclass(frozen=True)
class Sum:
    """sum(var, lower, upper, body): body summed over the integer var from lower to upper - 1."""
    var: Name
    lower: object
    upper: object
    body: object


@dataclass(frozen=True)
class Assign:
    """A kernel computation: target = value or target += value."""
    target: object
    op: str
    value: object


_CHILDREN = {
    Index: lambda n: n.indices,
    Input: lambda n: (n.index,),
    Call: lambda n: n.args,
    Unary: lambda n: (n.operand,),
    Binary: lambda n: (n.left, n.right),
    Cond: lambda n: (n.test, n.then, n.other),
    Sum: lambda n: (n.var, n.lower, n.upper, n.body),
    Assign: lambda n: (n.target, n.value),
}


def children(node) -> tuple:
    """The direct subtrees of a node."""
    of = _CHILDREN.get(type(node))
    return of(node) if of else ()


def walk(node) -> Iterator:
    """Every node of a tree, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def names(node) -> set[str]:
    """Plain names a tree reads (not array names, not function names)."""
    return {n.id for n in walk(node) if isinstance(n, Name)}


def substitute(node, mapping: dict):
    """A copy of the tree with names replaced by trees (mapping name -> node)."""
    return rewrite(node, lambda n: mapping.get(n.id, n) if isinstance(n, Name) else n)


_REBUILD = {
    Index: lambda n, fn: Index(n.array, tuple(rewrite(i, fn) for i in n.indices)),
    Input: lambda n, fn: Input(rewrite(n.index, fn)),
    Call: lambda n, fn: Call(n.func, tuple(rewrite(a, fn) for a in n.args)),
    Unary: lambda n, fn: Unary(n.op, rewrite(n.operand, fn)),
    Binary: lambda n, fn: Binary(n.op, rewrite(n.left, fn), rewrite(n.right, fn)),
    Cond: lambda n, fn: Cond(rewrite(n.test, fn), rewrite(n.then, fn), rewrite(n.other, fn)),
    Sum: lambda n, fn: Sum(_bound(rewrite(n.var, fn)), rewrite(n.lower, fn), rewrite(n.upper, fn),
                           rewrite(n.body, fn)),
    Assign: lambda n, fn: Assign(rewrite(n.target, fn), n.op, rewrite(n.value, fn)),
}


def _bound(var):
    """A sum's variable after a rewrite: it may be renamed, never replaced by a value."""
    if not isinstance(var, Name):
        raise ExpressionError("a sum's variable can only be renamed, not replaced by a value")
    return var


def rewrite(node, fn):
    """Rebuild a tree bottom-up, applying fn to every rebuilt node (fn returns a node)."""
    rebuild = _REBUILD.get(type(node))
    return fn(rebuild(node, fn) if rebuild else node)
