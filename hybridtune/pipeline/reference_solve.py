"""An IVP integrated by the numpy reference PIRK solver or a compiled variant; its final state."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hybridtune.describe.loader import load, load_named
from hybridtune.errors import RequestError
from hybridtune.reference.pirk import solve
from hybridtune.solver import Solver


@dataclass(frozen=True)
class SolveRequest:
    """What `solve` integrates: method and IVP by file or library name, the steps, the variant."""
    method: str
    ivp: str
    n: int
    t1: float
    steps: int
    t0: float = 0.0
    corrector_steps: int | None = None      # override of the method's m
    variant: str | None = None              # a compiled variant instead of the reference
    threads: int | None = None
    scenario: str | None = None             # whose pool the variant is from


@dataclass(frozen=True)
class Solution:
    """The final state and its summary."""
    method: object
    ivp: object
    state: np.ndarray

    def summary(self, request: SolveRequest) -> dict:
        """The JSON record of the solution."""
        return {"method": self.method.name, "ivp": self.ivp.name, "n": request.n,
                "t": request.t1, "variant": request.variant or "reference",
                "steps": request.steps, "norm2": float(np.linalg.norm(self.state)),
                "max_abs": float(np.max(np.abs(self.state)))}


def _method(request: SolveRequest):
    method = load_named("method", request.method, Path.cwd())
    if request.corrector_steps is not None:
        if request.corrector_steps < 1:
            raise RequestError(f"--corrector-steps: expected m >= 1, got {request.corrector_steps}")
        method = method.with_corrector_steps(request.corrector_steps)
    return method


def _integrate(request: SolveRequest, method, ivp) -> np.ndarray:
    if request.variant:
        scenario = load(request.scenario, "scenario") if request.scenario else None
        with Solver(request.variant, method, ivp, request.n, request.threads, scenario) as solver:
            return solver.integrate(request.t0, request.t1, request.steps)
    if request.threads is not None or request.scenario:
        raise RequestError("--threads and --scenario go with --variant")
    return solve(method, ivp, request.n, request.t0, request.t1, request.steps)


def solve_ivp(request: SolveRequest) -> Solution:
    """Integrate; refused where the final state is not finite (a step beyond the stability)."""
    method = _method(request)
    ivp = load_named("ivp", request.ivp, Path.cwd())
    y = _integrate(request, method, ivp)
    with np.errstate(all="ignore"):
        norm2 = float(np.linalg.norm(y))
    if not (np.all(np.isfinite(y)) and np.isfinite(norm2)):
        raise RequestError(f"the solution is not finite at t1 = {request.t1}: the step "
                           f"{(request.t1 - request.t0) / request.steps:g} is beyond the explicit "
                           f"PIRK step's stability for {ivp.name} (stable step at n = "
                           f"{request.n}: {ivp.step_size(request.n)})")
    return Solution(method, ivp, y)
