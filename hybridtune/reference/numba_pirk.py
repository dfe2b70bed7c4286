"""A PIRK step in numba, as a Python user would write it for speed: a baseline for generated code.

Skeleton A's loop structure (RHS_predictor, m x (LC, RHS), Approx, Update), `prange` over components,
`@njit(parallel=True, fastmath=False)`. The Butcher coefficients, s and m are written into the generated
source as literals (so numba compiles them as constants); the right-hand sides of Wave1D and
InverterChain are written by hand from their YAML files. Benchmark-only: numba is never a runtime
dependency of hybridtune (pyproject extra `bench`): it is imported where a step is compiled.
"""

from __future__ import annotations

import numpy as np

SUPPORTED = ("Wave1D", "InverterChain")

# --- hand-written right-hand sides: X is the input row, O the output row, T the time expression ---

_WAVE_CONSTANTS = """
c1 = 4.0 / 5.0
c2 = 1.0 / 5.0
c3 = 4.0 / 105.0
c4 = 1.0 / 280.0
"""

# scenarios/ivps/Wave1D.ivp.yaml: u_t = -u_x, eighth-order central differences, zero outside [0, n).
_WAVE_RHS = """
{O}[0] = -rdx * (c1 * {X}[1] - c2 * {X}[2] + c3 * {X}[3] - c4 * {X}[4])
{O}[1] = -rdx * (c1 * ({X}[2] - {X}[0]) - c2 * {X}[3] + c3 * {X}[4] - c4 * {X}[5])
{O}[2] = -rdx * (c1 * ({X}[3] - {X}[1]) - c2 * ({X}[4] - {X}[0]) + c3 * {X}[5] - c4 * {X}[6])
{O}[3] = -rdx * (c1 * ({X}[4] - {X}[2]) - c2 * ({X}[5] - {X}[1]) + c3 * ({X}[6] - {X}[0]) - c4 * {X}[7])
for j in prange(4, n - 4):
    {O}[j] = -rdx * (c1 * ({X}[j + 1] - {X}[j - 1]) - c2 * ({X}[j + 2] - {X}[j - 2]) + c3 * ({X}[j + 3] - {X}[j - 3]) - c4 * ({X}[j + 4] - {X}[j - 4]))
{O}[n - 4] = -rdx * (c1 * ({X}[n - 3] - {X}[n - 5]) - c2 * ({X}[n - 2] - {X}[n - 6]) + c3 * ({X}[n - 1] - {X}[n - 7]) + c4 * {X}[n - 8])
{O}[n - 3] = -rdx * (c1 * ({X}[n - 2] - {X}[n - 4]) - c2 * ({X}[n - 1] - {X}[n - 5]) - c3 * {X}[n - 6] + c4 * {X}[n - 7])
{O}[n - 2] = -rdx * (c1 * ({X}[n - 1] - {X}[n - 3]) + c2 * {X}[n - 4] - c3 * {X}[n - 5] + c4 * {X}[n - 6])
{O}[n - 1] = -rdx * (-c1 * {X}[n - 2] + c2 * {X}[n - 3] - c3 * {X}[n - 4] + c4 * {X}[n - 5])
"""

_IC_CONSTANTS = """
Uop = 5.0
UT = 1.0
Ygain = 100.0
"""

# scenarios/ivps/InverterChain.ivp.yaml: U_j' = Uop - U_j - Y (max(U_{j-1} - UT, 0)^2 - max(U_{j-1} - U_j - UT, 0)^2)
# with U_{-1} = U_in(t) = 2.5 (1 - cos(2 pi t / 80)).
_IC_RHS = """
uin = 2.5 * (1.0 - math.cos(2.0 * math.pi * ({T}) / 80.0))
p = max(uin - UT, 0.0)
q = max(uin - {X}[0] - UT, 0.0)
{O}[0] = Uop - {X}[0] - Ygain * (p * p - q * q)
for j in prange(1, n):
    pj = max({X}[j - 1] - UT, 0.0)
    qj = max({X}[j - 1] - {X}[j] - UT, 0.0)
    {O}[j] = Uop - {X}[j] - Ygain * (pj * pj - qj * qj)
"""

_IVPS = {
    "Wave1D": (_WAVE_CONSTANTS, _WAVE_RHS, "rdx = (n - 1) / 500.0"),
    "InverterChain": (_IC_CONSTANTS, _IC_RHS, ""),
}


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else line for line in text.strip("\n").split("\n"))


def _rhs_block(ivp_name: str, x: str, o: str, time: str) -> str:
    return _IVPS[ivp_name][1].format(X=x, O=o, T=time)


def step_source(method, ivp_name: str) -> str:
    """Python source of `step(y, F, Y, dy, t, h)` (y and dy [n], F and Y [s][n]), updating y in place."""
    if ivp_name not in _IVPS:
        raise ValueError(f"no hand-written numba right-hand side for IVP {ivp_name} "
                         f"(have {', '.join(SUPPORTED)})")
    A, b, c = method.arrays()
    s, m = method.stages, method.corrector_steps
    constants, _, prelude = _IVPS[ivp_name]
    lit = lambda x: repr(float(x))
    body = ["n = y.shape[0]"]
    if prelude:
        body.append(prelude)
    body.append("# RHS_predictor: F_l = f(t + c_l h, y)")
    for l in range(s):
        body.append(f"Fr{l} = F[{l}]")
        body.append(_rhs_block(ivp_name, "y", f"Fr{l}", f"t + {lit(c[l])} * h"))
    body.append(f"for k in range({m}):")
    lc = ["    for j in prange(n):", "        yj = y[j]"]
    lc += [f"        f{i} = F[{i}, j]" for i in range(s)]
    for l in range(s):
        terms = " + ".join(f"{lit(A[l, i])} * f{i}" for i in range(s))
        lc.append(f"        Y[{l}, j] = yj + h * ({terms})")
    body.append("    # LC: Y_l = y + h sum_i a_li F_i")
    body += lc
    body.append("    # RHS: F_l = f(t + c_l h, Y_l)")
    for l in range(s):
        body.append(f"    Yr{l} = Y[{l}]")
        body.append(f"    Fs{l} = F[{l}]")
        body.append(_indent(_rhs_block(ivp_name, f"Yr{l}", f"Fs{l}", f"t + {lit(c[l])} * h"), 4))
    terms = " + ".join(f"{lit(b[i])} * F[{i}, j]" for i in range(s))
    body += ["# Approx: dy = sum_i b_i F_i", "for j in prange(n):", f"    dy[j] = {terms}",
             "# Update: y = y + h dy", "for j in prange(n):", "    y[j] = y[j] + h * dy[j]"]
    return ("import math\nfrom numba import prange\n" + constants + "\n\n"
            "def step(y, F, Y, dy, t, h):\n" + _indent("\n".join(body), 4) + "\n")


def rhs_source(ivp_name: str) -> str:
    """Python source of `rhs(t, x, out)`: the same hand-written block the step uses, alone."""
    constants, _, prelude = _IVPS[ivp_name]
    body = ["n = x.shape[0]"] + ([prelude] if prelude else []) + [_rhs_block(ivp_name, "x", "out", "t")]
    return ("import math\nfrom numba import prange\n" + constants + "\n\n"
            "def rhs(t, x, out):\n" + _indent("\n".join(body), 4) + "\n")


def numba_module():
    """numba, imported only where a step is compiled or timed."""
    import numba                # optional: the bench extra, never a run-time dependency
    return numba


def _compile(source: str, name: str):
    namespace: dict = {}
    exec(compile(source, f"<numba_pirk {name}>", "exec"), namespace)
    return numba_module().njit(parallel=True, fastmath=False)(namespace[name])


class NumbaPIRK:
    """The compiled numba step for one (method, IVP), with its state arrays for one n."""

    def __init__(self, method, ivp_name: str):
        self.method = method
        self.ivp_name = ivp_name
        self.source = step_source(method, ivp_name)
        self.step = _compile(self.source, "step")
        self.rhs = _compile(rhs_source(ivp_name), "rhs")
        self.arrays = None

    def compile(self, n: int = 64) -> None:
        """Trigger JIT compilation on a small problem (types, not sizes, are what numba specialises on)."""
        y = np.linspace(0.0, 1.0, n)
        self.rhs(0.5, y, np.empty(n))
        self.allocate(n)
        self.run(y, 0.0, 1e-6, 1)
        self.arrays = None

    def allocate(self, n: int) -> None:
        s = self.method.stages
        self.arrays = (np.zeros(n), np.zeros((s, n)), np.zeros((s, n)), np.zeros(n))

    def run(self, y0: np.ndarray, t0: float, h: float, steps: int) -> np.ndarray:
        """The state after `steps` steps from y0 (the returned array is the internal state)."""
        y, F, Y, dy = self.arrays
        y[:] = y0
        for k in range(steps):
            self.step(y, F, Y, dy, t0 + k * h, h)
        return y


def threading_layer() -> str:
    try:
        return numba_module().threading_layer()
    except ValueError:       # no parallel region has run yet
        return "unset"

