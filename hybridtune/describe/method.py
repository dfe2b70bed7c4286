"""ODE method descriptions (Butcher tables, Offsite's .ode format) as frozen records."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from hybridtune.describe.c_arithmetic import EvaluationError, RealEvaluator
from hybridtune.describe.expr import Binary, Call, Name, Num, Unary, parse_expression, walk
from hybridtune.describe.source import Node, Source

ROW_SUM_TOLERANCE = 1e-10
ORDER_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Method:
    """An s-stage implicit RK base method and its number of PIRK corrector steps m."""
    name: str
    stages: int
    order: int
    corrector_steps: int
    A: tuple
    b: tuple
    c: tuple
    path: str = ""

    @property
    def pirk_order(self) -> int:
        return min(self.order, self.corrector_steps + 1)

    def with_corrector_steps(self, m: int) -> "Method":
        return replace(self, corrector_steps=m)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.A), np.array(self.b), np.array(self.c)


def _number(node: Node) -> float:
    tree = node.parsed(parse_expression)
    for part in walk(tree):
        if isinstance(part, Name) and part.id not in ("M_PI", "M_E"):
            raise node.error(f"arithmetic on numbers only (no name '{part.id}')")
        if isinstance(part, Binary) and part.op not in "+-*/":
            raise node.error(f"arithmetic with + - * / only (not '{part.op}')")
        if not isinstance(part, (Num, Name, Binary, Unary, Call)):
            raise node.error("arithmetic on numbers, + - * /, parentheses and math functions")
        if isinstance(part, Unary) and part.op == "!":
            raise node.error("arithmetic with + - * / only (not '!')")
    try:
        value = float(RealEvaluator({})(tree))
    except (EvaluationError, TypeError, ValueError):
        raise node.error("a number") from None
    if not np.isfinite(value):
        raise node.error("a finite number (this evaluates to " + repr(value) + ")")
    return value


def _quadrature_residual(b: tuple, c: tuple, k: int) -> float:
    """sum_i b_i c_i^(k-1) - 1/k; not finite where the powers overflow."""
    with np.errstate(all="ignore"):
        return float(np.sum(np.array(b) * np.array(c) ** (k - 1)) - 1.0 / k)


def _vector(node: Node, length: int) -> tuple:
    items = node.sequence()
    if len(items) != length:
        raise node.error(f"a list of {length} entries (one per stage), got {len(items)}",
                         value=f"{len(items)} entries")
    return tuple(_number(item) for item in items)


def parse_method(source: Source) -> Method:
    root = Node.root(source)
    fields = root.mapping(required=("stages", "order", "A", "b", "c"),
                          optional=("corrector_steps", "name", "kind"))
    stages = fields["stages"].integer(minimum=1)
    order = fields["order"].integer(minimum=1)
    m = fields["corrector_steps"].integer(minimum=1) if "corrector_steps" in fields \
        else max(order - 1, 1)
    rows = fields["A"].sequence()
    if len(rows) != stages:
        raise fields["A"].error(f"{stages} rows (A is s x s with s = stages = {stages}), got "
                                f"{len(rows)}", value=f"{len(rows)} rows")
    A = tuple(_vector(row, stages) for row in rows)
    b = _vector(fields["b"], stages)
    c = _vector(fields["c"], stages)
    for i, row in enumerate(A):
        total = sum(row)
        scale = max(1.0, sum(abs(x) for x in row))
        if not (math.isfinite(scale) and abs(total - c[i]) <= ROW_SUM_TOLERANCE * scale):
            raise fields["c"].child(i).error(
                f"c[{i}] equal to the row sum of A[{i}] = {total!r} (within {ROW_SUM_TOLERANCE:g})",
                value=c[i])
    for k in range(1, order + 1):   # order p implies the quadrature conditions B(p)
        residual = _quadrature_residual(b, c, k)
        if not abs(residual) <= ORDER_TOLERANCE:
            raise fields["order"].error(
                f"an order that b and c support: order {order} needs sum_i b_i c_i^(k-1) = 1/k "
                f"for k = 1..{order}, which fails at k = {k} (residual {residual:.3g})")
    name = fields["name"].string() if "name" in fields else Path(source.path).name.split(".")[0]
    return Method(name, stages, order, m, A, b, c, source.path)
