"""Vectorised numpy evaluation of an IVP's right-hand side and initial values at a size n."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.ivp import IVP
from hybridtune.describe.nodes import Input, Name, Rhs, Sum, children

VARYING = frozenset({"t"})       # the names whose value changes between calls of f


def _prepared(ivp: IVP, blocks: tuple, n: int) -> tuple[dict, list]:
    ivp.check_n(n)
    env = ivp.environment(n)
    return env, [(block.indices(env), block.code) for block in blocks]


def initial_values(ivp: IVP, n: int) -> np.ndarray:
    """y(t0) at size n."""
    env, parts = _prepared(ivp, ivp.initial_values, n)
    y = np.empty(n)
    for js, code in parts:
        y[js] = Evaluator({**env, "j": js})(code)
    return y


class _Remembering(Evaluator):
    """An evaluator that computes each subtree in `fixed` (ids) once and keeps its value in
    `kept` for the next call: the parts of a block's code that depend on neither t nor y."""

    def __init__(self, env, input_vector, fixed: set, kept: dict):
        super().__init__(env, input_vector=input_vector)
        self.fixed, self.kept = fixed, kept

    def _eval(self, node):
        if id(node) not in self.fixed:
            return super()._eval(node)
        if id(node) not in self.kept:
            self.kept[id(node)] = super()._eval(node)
        return self.kept[id(node)]


def fixed_subtrees(code) -> set:
    """ids of the subtrees whose value is the same at every call of f: no %in, no %RHS, no sum
    and no name in VARYING below them."""
    fixed: set = set()

    def visit(node) -> bool:
        below = [visit(child) for child in children(node)]
        if all(below) and not isinstance(node, (Input, Rhs, Sum)) \
                and not (isinstance(node, Name) and node.id in VARYING):
            fixed.add(id(node))
            return True
        return False

    visit(code)
    return fixed


def right_hand_side(ivp: IVP, n: int, remember: bool = True
                    ) -> Callable[[float, np.ndarray], np.ndarray]:
    """f(t, y) at size n, evaluating every component block at once; what does not depend on t
    or y (index arithmetic, coefficients of the position) computed at the first call only
    (unless remember is False: every call evaluates all)."""
    env, parts = _prepared(ivp, ivp.components, n)
    remembered = [(fixed_subtrees(code) if remember else set(), {}) for _, code in parts]

    def f(t: float, y: np.ndarray) -> np.ndarray:
        out = np.empty(n)
        for (js, code), (fixed, kept) in zip(parts, remembered):
            out[js] = _Remembering({**env, "j": js, "t": float(t)},
                                   lambda index: y[index], fixed, kept)(code)
        return out

    return f


def component(ivp: IVP, n: int) -> Callable[[int, float, np.ndarray], float]:
    """f_j(t, y): one component of the right-hand side, as a kernel's %RHS computes it."""
    env = ivp.environment(n)
    owner = np.empty(n, dtype=np.int64)
    for number, block in enumerate(ivp.components):
        owner[block.indices(env)] = number

    def f_j(j: int, t: float, y: np.ndarray) -> float:
        code = ivp.components[owner[j]].code
        return float(Evaluator({**env, "j": int(j), "t": float(t)},
                               input_vector=lambda index: y[index])(code))

    return f_j
