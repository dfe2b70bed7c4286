"""The reference PIRK integrator: the time step of DESIGN.md written out plainly in numpy."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hybridtune.describe.ivp import IVP
from hybridtune.describe.method import Method
from hybridtune.errors import RequestError
from hybridtune.reference.rhs import initial_values, right_hand_side


def pirk_step(f: Callable, t: float, y: np.ndarray, h: float, method: Method) -> np.ndarray:
    """One step of size h: predictor, m fixed-point corrector steps, then the quadrature."""
    A, b, c = method.arrays()
    s = method.stages
    F = [f(t + c[i] * h, y) for i in range(s)]                       # F_i(0)
    for _ in range(method.corrector_steps):
        Y = [y + h * sum(A[l, i] * F[i] for i in range(s)) for l in range(s)]
        F = [f(t + c[i] * h, Y[i]) for i in range(s)]                # F_i(k)
    return y + h * sum(b[i] * F[i] for i in range(s))


def integrate(method: Method, f: Callable, y0: np.ndarray, t0: float, t1: float,
              steps: int) -> np.ndarray:
    """y(t1) from y(t0) = y0 with `steps` fixed steps of size (t1 - t0) / steps."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise RequestError(f"--steps: expected a positive number of steps, got {steps}")
    if not (np.isfinite(t0) and np.isfinite(t1)) or t1 <= t0:
        raise RequestError(f"--t0/--t1: expected finite t0 < t1, got t0 = {t0}, t1 = {t1}")
    h = (t1 - t0) / steps
    y = np.array(y0, dtype=float)
    with np.errstate(all="ignore"):   # an unstable step shows as a non-finite state, returned
        for k in range(steps):
            y = pirk_step(f, t0 + k * h, y, h, method)
            if not np.all(np.isfinite(y)):
                break
    return y


def solve(method: Method, ivp: IVP, n: int, t0: float, t1: float, steps: int) -> np.ndarray:
    """The IVP's state at t1 at size n, started from its initial values at t0."""
    ivp.check_n(n)
    return integrate(method, right_hand_side(ivp, n), initial_values(ivp, n), t0, t1, steps)
