"""The numba and numpy steps beside the generated variants: checked against the reference, timed.

Both are timed in this process under the timing protocol (measure/repetitions); a step that
disagrees with the reference gets no time.
"""

from __future__ import annotations

import math
import time

import numpy as np

from hybridtune.measure.repetitions import time_steps
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.tasks import reference_after, stable_step
from hybridtune.reference.numba_pirk import numba_module, threading_layer
from hybridtune.reference.pirk import pirk_step
from hybridtune.reference.rhs import initial_values, right_hand_side

RHS_TOLERANCE = 1e-12
NORMAL = MeasureOptions()


def relative_error(x, reference) -> float:
    """max |x - reference| relative to max |reference|."""
    scale = float(np.max(np.abs(reference)))
    error = float(np.max(np.abs(np.asarray(x) - reference)))
    return error / scale if scale > 0 else error


class ReferenceStates:
    """The reference state after some steps per (IVP, n), computed once each."""

    def __init__(self, method):
        self.method = method
        self.cache: dict = {}

    def after(self, ivp, n: int, steps: int) -> np.ndarray:
        key = (ivp.name, n, steps)
        if key not in self.cache:
            self.cache[key] = reference_after(self.method, ivp, n, stable_step(ivp, n), steps)
        return self.cache[key]


def _rhs_errors(numba_step, ivp, n: int) -> tuple[dict, str]:
    """The numba right-hand side against the reference's, at a small n and at n, on a state
    that takes every branch; why it is wrong ('' where it is right)."""
    errors = {}
    for check_n in sorted({min(1000, n), n}):
        x = np.random.default_rng(check_n).uniform(0.0, 5.0, check_n)
        got = np.empty(check_n)
        numba_step.rhs(1.7, x, got)
        error = relative_error(got, right_hand_side(ivp, check_n)(1.7, x))
        errors[f"rhs_error_n{check_n}"] = error
        if not (math.isfinite(error) and error <= RHS_TOLERANCE):
            return errors, (f"numba RHS differs from the numpy reference by {error:.3g} at "
                            f"n = {check_n} (tolerance {RHS_TOLERANCE:g})")
    return errors, ""


def numba_case(numba_step, ivp, n: int, threads: int, references: ReferenceStates) -> dict:
    """The numba step (a NumbaPIRK) checked (its RHS to RHS_TOLERANCE, its state after
    check_steps to the variants' tolerance) and timed on `threads` threads."""
    numba = numba_module()
    numba.set_num_threads(threads)
    errors, wrong = _rhs_errors(numba_step, ivp, n)
    out = {"threads": threads, "numba_version": numba.__version__, **errors}
    if wrong:
        return {**out, "status": "wrong_result", "message": wrong}
    h, y0 = stable_step(ivp, n), initial_values(ivp, n)
    numba_step.allocate(n)
    state = numba_step.run(y0, 0.0, h, NORMAL.check_steps)
    out["check_error"] = error = relative_error(state, references.after(ivp, n, NORMAL.check_steps))
    if not (math.isfinite(error) and error <= NORMAL.tolerance):
        return {**out, "status": "wrong_result", "message": (
            f"numba state after {NORMAL.check_steps} steps differs from the reference by "
            f"{error:.3g} (tolerance {NORMAL.tolerance:g})")}
    y, F, Y, dy = numba_step.arrays
    step = numba_step.step

    def run_steps(k: int, warm: bool) -> float:
        if not warm:
            y[:] = y0
        start = time.perf_counter()
        for i in range(k):
            step(y, F, Y, dy, i * h, h)
        return (time.perf_counter() - start) / k if k else 0.0

    out.update(time_steps(run_steps, NORMAL).as_json())
    numba_step.arrays = None
    if not np.all(np.isfinite(y)):
        return {**out, "status": "wrong_result", "message": "numba state not finite after timing"}
    return {**out, "status": "ok", "threading_layer": threading_layer()}


def numpy_case(method, ivp, n: int, large: bool) -> dict:
    """The plain numpy step (reference/pirk's pirk_step on one thread) timed; at a large n (a
    second or more a step) one warm-up step and three single-step repetitions."""
    f, h, y0 = right_hand_side(ivp, n), stable_step(ivp, n), initial_values(ivp, n)
    state = {"y": y0.copy()}

    def run_steps(k: int, warm: bool) -> float:
        y = state["y"] if warm else y0.copy()
        start = time.perf_counter()
        for i in range(k):
            y = pirk_step(f, i * h, y, h, method)
        state["y"] = y
        return (time.perf_counter() - start) / k if k else 0.0

    options = MeasureOptions(budget_s=0.0, min_repetitions=3, warmup_steps=1) if large \
        else MeasureOptions(budget_s=3.0, warmup_steps=1)
    return {**time_steps(run_steps, options).as_json(), "status": "ok", "threads": 1,
            "note": "numpy evaluates element-wise on one thread; the same value is reported for "
                    "1 and 2 threads"}
