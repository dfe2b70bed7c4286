"""Vectorised numpy evaluation of an IVP's right-hand side and initial values at a size n."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.ivp import IVP


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


def right_hand_side(ivp: IVP, n: int) -> Callable[[float, np.ndarray], np.ndarray]:
    """f(t, y) at size n, evaluating every component block at once."""
    env, parts = _prepared(ivp, ivp.components, n)

    def f(t: float, y: np.ndarray) -> np.ndarray:
        out = np.empty(n)
        for js, code in parts:
            out[js] = Evaluator({**env, "j": js, "t": float(t)},
                                input_vector=lambda index: y[index])(code)
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
