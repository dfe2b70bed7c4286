"""The shipped IVP descriptions against hand-written numpy right-hand sides, exact solutions and scipy."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.reference.pirk import solve
from hybridtune.reference.rhs import initial_values, right_hand_side

# Relative max-norm tolerance of description vs hand-written evaluation: both are the same formulas in
# double precision, differing only in the order of a few roundings (observed <= 5e-16).
RHS_TOL = 1e-12


@lru_cache(maxsize=None)
def ivp_named(name: str):
    return load_named("ivp", name, PROJECT_ROOT)


@lru_cache(maxsize=None)
def method_named(name: str):
    return load_named("method", name, PROJECT_ROOT)


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    """max|got - want| / max|want|; NaN (which fails every `<=`) when either has a non-finite entry."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.all(np.isfinite(got)), "non-finite entries in the result under test"
    assert np.all(np.isfinite(want)), "non-finite entries in the reference"
    scale = np.max(np.abs(want))
    assert scale > 0
    return float(np.max(np.abs(got - want)) / scale)


# --- hand-written right-hand sides and initial values, straight from IVPS.md ----------------------

def cusp_rhs(t: float, z: np.ndarray) -> np.ndarray:
    """Cusp, n = 3N, blocks y | a | b, periodic ring, D = N^2/144 (Hairer & Wanner)."""
    N = z.size // 3
    D = N * N / 144.0
    y, a, b = z[:N], z[N:2 * N], z[2 * N:]

    def lap(w):
        return np.roll(w, 1) - 2.0 * w + np.roll(w, -1)   # w_{i-1} - 2 w_i + w_{i+1}, periodic

    u = (y - 0.7) * (y - 1.3)
    v = u / (u + 0.1)
    dy = -1e4 * (b + a * y + y ** 3) + D * lap(y)
    da = b + 0.07 * v + D * lap(a)
    db = (1.0 - a ** 2) * b - a - 0.4 * y + 0.035 * v + D * lap(b)
    return np.concatenate([dy, da, db])


def cusp_y0(n: int) -> np.ndarray:
    N = n // 3
    theta = 2.0 * np.pi * (np.arange(N) + 1) / N
    return np.concatenate([np.zeros(N), -2.0 * np.cos(theta), 2.0 * np.sin(theta)])


def inverter_rhs(t: float, U: np.ndarray) -> np.ndarray:
    """InverterChain, scaled form: U_op = 5, U_T = 1, Y = 100, U_{-1} = U_in(t)."""
    u_in = 2.5 * (1.0 - np.cos(2.0 * np.pi * t / 80.0))
    prev = np.concatenate([[u_in], U[:-1]])
    g = np.maximum(prev - 1.0, 0.0) ** 2 - np.maximum(prev - U - 1.0, 0.0) ** 2
    return 5.0 - U - 100.0 * g


def inverter_y0(n: int) -> np.ndarray:
    return np.where(np.arange(n) % 2 == 0, 5.0, 0.0)


def medakzo_rhs(t: float, y: np.ndarray) -> np.ndarray:
    """Medakzo, n = 2N, blocks u | v, dz = 1/N, z_j = j dz, c = 4, k = 100, u_0 = phi(t)."""
    N = y.size // 2
    u, v = y[:N], y[N:]
    dz = 1.0 / N
    z = np.arange(1, N + 1) * dz
    alpha = 2.0 * (z - 1.0) ** 3 / 4.0 ** 2
    beta = (z - 1.0) ** 4 / 4.0 ** 2
    phi = 2.0 if t <= 5.0 else 0.0
    u_left = np.concatenate([[phi], u[:-1]])
    u_right = np.concatenate([u[1:], [0.0]])           # unused at j = N (overwritten below)
    du = (beta * (u_left - 2.0 * u + u_right) / dz ** 2 + alpha * (u_right - u_left) / (2.0 * dz)
          - 100.0 * u * v)
    du[-1] = -100.0 * u[-1] * v[-1]
    dv = -100.0 * u * v
    return np.concatenate([du, dv])


def medakzo_y0(n: int) -> np.ndarray:
    return np.concatenate([np.zeros(n // 2), np.ones(n // 2)])


def wave_rhs(t: float, u: np.ndarray) -> np.ndarray:
    """Wave1D: u_t = -u_x on [-50, 450], eighth-order central differences, zero outside."""
    n = u.size
    dx = 500.0 / (n - 1)
    padded = np.pad(u, 4)                               # four zeros either side
    coeffs = (4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0)
    ux = sum(c * (padded[4 + k:4 + k + n] - padded[4 - k:4 - k + n])
             for k, c in enumerate(coeffs, start=1))
    return -ux / dx


def wave_y0(n: int) -> np.ndarray:
    x = -50.0 + np.arange(n) * (500.0 / (n - 1))
    return 0.5 * np.exp(-x ** 2 / 9.0)


def heat_rhs(t: float, u: np.ndarray) -> np.ndarray:
    """Heat2D: g x g row-major, h = 1/(g+1), five-point Laplacian, zero Dirichlet boundary."""
    g = math.isqrt(u.size)
    h = 1.0 / (g + 1)
    P = np.pad(u.reshape(g, g), 1)
    lap = P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2] + P[1:-1, 2:] - 4.0 * P[1:-1, 1:-1]
    return (lap / h ** 2).ravel()


def heat_y0(n: int) -> np.ndarray:
    g = math.isqrt(n)
    s = np.sin(np.pi * (np.arange(g) + 1) / (g + 1))   # sin(pi x_k), x_k = (k+1) h
    return np.outer(s, s).ravel()                       # [row, col] = sin(pi y_row) sin(pi x_col)


def heat_lambda(n: int) -> float:
    dh = 1.0 / (math.isqrt(n) + 1)
    return -2.0 * (4.0 / dh ** 2) * math.sin(math.pi * dh / 2.0) ** 2


HAND = {
    "Cusp": (cusp_rhs, cusp_y0),
    "InverterChain": (inverter_rhs, inverter_y0),
    "Medakzo": (medakzo_rhs, medakzo_y0),
    "Wave1D": (wave_rhs, wave_y0),
    "Heat2D": (heat_rhs, heat_y0),
}

# Per IVP: sizes (the smallest valid n first), times, and the range random states are drawn from.
# InverterChain: t = 0 has U_in = 0, the others switch the input's fmax branch on (U_in > U_T = 1
# for 13.4 < t < 66.6); states in [0, 5] exercise both fmax branches of g. Medakzo: phi(t) switches
# at t = 5 (phi = 2 for t <= 5), so t = 5 itself and the next double above it are both checked.
RHS_CASES = {
    "Cusp": ([9, 12, 15, 30, 300, 1002], [0.0, 0.7, 3.0], (-2.0, 2.0)),
    "InverterChain": ([2, 3, 4, 20, 1000], [0.0, 10.0, 20.0, 40.0, 63.7, 80.0], (0.0, 5.0)),
    "Medakzo": ([4, 6, 8, 20, 300, 1000],
                [0.0, 2.5, 4.999, 5.0, float(np.nextafter(5.0, 6.0)), 5.001, 7.5, 60.0],
                (0.0, 2.0)),
    "Wave1D": ([9, 10, 11, 40, 300, 1000], [0.0, 100.0], (-1.0, 1.0)),
    "Heat2D": ([9, 16, 25, 100, 400, 1024], [0.0, 1.0], (-1.0, 1.0)),
}


def _random_state(name: str, n: int, seed: int) -> np.ndarray:
    low, high = RHS_CASES[name][2]
    return np.random.default_rng(seed).uniform(low, high, n)


def _check_rhs(name: str, n: int, times, seeds) -> None:
    hand_rhs, _ = HAND[name]
    f = right_hand_side(ivp_named(name), n)
    for seed in seeds:
        y = _random_state(name, n, seed)
        before = y.copy()
        for t in times:
            got = f(t, y)
            err = rel_err(got, hand_rhs(t, y))
            assert err <= RHS_TOL, f"{name} n={n} t={t!r} seed={seed}: relative error {err:.3e}"
        assert np.array_equal(y, before), "the right-hand side changed its input"


@pytest.mark.parametrize("name,n", [(name, n) for name, (sizes, _, _) in RHS_CASES.items()
                                    for n in sizes])
def test_rhs_matches_hand_written(name, n):
    _check_rhs(name, n, RHS_CASES[name][1], seeds=range(3))


@pytest.mark.parametrize("name", list(HAND))
def test_rhs_matches_hand_written_at_sample_sizes(name):
    """Every size the description itself offers as a sample (up to 10^4)."""
    ivp = ivp_named(name)
    samples = ivp.sizes.samples()
    assert samples and samples[0] == RHS_CASES[name][0][0]   # the smallest valid n is in RHS_CASES
    for n in samples:
        _check_rhs(name, n, RHS_CASES[name][1], seeds=[100 + n])


@pytest.mark.parametrize("name,n", [(name, n) for name, (sizes, _, _) in RHS_CASES.items()
                                    for n in sizes])
def test_initial_values_match_hand_written(name, n):
    _, hand_y0 = HAND[name]
    err = rel_err(initial_values(ivp_named(name), n), hand_y0(n))
    assert err <= RHS_TOL, f"{name} n={n}: relative error {err:.3e}"


@pytest.mark.parametrize("name", list(HAND))
def test_step_size_positive(name):
    ivp = ivp_named(name)
    for n in ivp.sizes.samples():
        h = ivp.step_size(n)
        assert h is not None and np.isfinite(h) and h > 0, (name, n, h)


# --- Heat2D: the exact semi-discrete solution --------------------------------------------------

@pytest.mark.parametrize("n", [9, 16, 25, 100, 400, 10000])
def test_heat2d_initial_values_are_an_eigenvector(n):
    ivp = ivp_named("Heat2D")
    u0 = initial_values(ivp, n)
    lam = heat_lambda(n)
    # Roundoff: the stencil cancels terms of size 4 (g+1)^2 |u| down to |lambda u| ~ 2 pi^2 |u|,
    # so about 4 (g+1)^2 eps / (2 pi^2) <= 5e-13 relative at g = 100; 1e-10 leaves ample margin.
    err = rel_err(right_hand_side(ivp, n)(0.3, u0), lam * u0)
    assert err <= 1e-10, f"n={n}: relative error {err:.3e}"


@pytest.mark.parametrize("n", [9, 16, 25, 100])
def test_heat2d_pirk_matches_exact_solution(n):
    ivp = ivp_named("Heat2D")
    h = ivp.step_size(n)
    steps = 50
    t1 = steps * h
    lam = heat_lambda(n)
    y = solve(method_named("radauIIA7"), ivp, n, 0.0, t1, steps)
    exact = np.exp(lam * t1) * initial_values(ivp, n)
    assert 1.0 - math.exp(lam * t1) > 0.2      # the solution really decays over the interval
    # Order 7: global error ~ steps |h lambda|^8 / 8! = 1.7e-14 at n = 9 (|h lambda| = 0.044, the
    # largest here), plus roundoff ~1e-15 per step. Observed <= 1.8e-14; 1e-12 leaves a margin of 50.
    err = rel_err(y, exact)
    assert err <= 1e-12, f"n={n}: relative error {err:.3e}"


# --- the reference PIRK solver against scipy's Radau --------------------------------------------

# (name, n, t0, steps, tol). The PIRK solver runs `steps` steps of the IVP's stable step from t0;
# scipy's Radau (rtol = atol = 1e-12) uses the hand-written right-hand side. Tolerances, each about
# 5-10x the observed difference:
#  Cusp: the difference (1.74e-10) does not move when scipy's rtol goes 1e-10 -> 1e-13, so it is
#    the PIRK's own order-7 error at |h lambda| ~ 0.2 (the -1e4 (a + 3 y^2) term); tol 1e-9.
#  InverterChain from t0 = 20, where U_in = 2.5 > U_T and the input drives the chain (U_0 drops by
#    ~225 per unit time at the start): observed 4e-14, limited by scipy at rtol 1e-12; tol 1e-12.
#  Medakzo: observed 1.5e-13 (scipy-limited; the stiff boundary transient from u = 0, phi = 2);
#    tol 1e-12.
#  Wave1D: purely imaginary spectrum up to |h lambda| = 0.34 at the stable step; the PIRK error
#    ~ steps |h lambda|^8 / 8! ~ 1.4e-7 predicted, 9.5e-8 observed, independent of scipy's rtol;
#    tol 3e-7.
#  Heat2D: |h lambda_max| ~ 0.16, PIRK error ~1e-15, observed 6e-16 (scipy-limited); tol 1e-13.
SCIPY_CASES = [
    ("Cusp", 30, 0.0, 50, 1e-9),
    ("InverterChain", 20, 20.0, 50, 1e-12),
    ("Medakzo", 20, 0.0, 50, 1e-12),
    ("Wave1D", 40, 0.0, 50, 3e-7),
    ("Heat2D", 25, 0.0, 50, 1e-13),
]


@pytest.mark.parametrize("name,n,t0,steps,tol", SCIPY_CASES, ids=[c[0] for c in SCIPY_CASES])
def test_pirk_matches_scipy_radau(name, n, t0, steps, tol):
    ivp = ivp_named(name)
    hand_rhs, hand_y0 = HAND[name]
    t1 = t0 + steps * ivp.step_size(n)
    y = solve(method_named("radauIIA7"), ivp, n, t0, t1, steps)
    ref = solve_ivp(hand_rhs, (t0, t1), hand_y0(n), method="Radau", rtol=1e-12, atol=1e-12)
    assert ref.success, ref.message
    y_ref = ref.y[:, -1]
    # the solution really moves over the interval (a test of a frozen state would prove nothing)
    assert rel_err(hand_y0(n), y_ref) > 100 * tol
    err = rel_err(y, y_ref)
    assert err <= tol, f"{name} n={n}: relative error {err:.3e} > {tol:.0e}"


def test_medakzo_pirk_across_the_phi_switch():
    """Steps aligned with t = 5 (binary-exact times), so phi's jump falls on a step boundary."""
    name, n = "Medakzo", 20
    ivp = ivp_named(name)
    h = 2.0 ** -10
    assert h <= ivp.step_size(n)
    t0, t1, steps = 5.0 - 20 * h, 5.0 + 20 * h, 40
    y = solve(method_named("radauIIA7"), ivp, n, t0, t1, steps)
    # scipy in two pieces; the second sees phi = 0 even at its starting point t = 5.
    after = float(np.nextafter(5.0, 6.0))
    first = solve_ivp(medakzo_rhs, (t0, 5.0), medakzo_y0(n), method="Radau", rtol=1e-12,
                      atol=1e-12)
    second = solve_ivp(lambda t, z: medakzo_rhs(max(t, after), z), (5.0, t1), first.y[:, -1],
                       method="Radau", rtol=1e-12, atol=1e-12)
    assert first.success and second.success
    y_ref = second.y[:, -1]
    # Had phi stayed 2 after t = 5 the result would differ by 8.5e-2 relative; observed 3.4e-14
    # (scipy-limited, as in the Medakzo case above); tol 1e-12.
    err = rel_err(y, y_ref)
    assert err <= 1e-12, f"relative error {err:.3e}"


# --- observed convergence order on Wave1D ------------------------------------------------------

@pytest.mark.parametrize("m,expected", [(4, 5), (1, 2)])
def test_observed_order_wave1d(m, expected):
    """radauIIA5 with m corrector steps has order min(5, m + 1) on Wave1D at n = 30."""
    n, T = 30, 200.0
    method = method_named("radauIIA5").with_corrector_steps(m)
    assert method.pirk_order == expected
    ivp = ivp_named("Wave1D")
    # Wave1D is linear and autonomous, y' = A y: the exact semi-discrete solution is expm(T A) y0,
    # A built column by column from the hand-written right-hand side (expm is accurate to ~1e-13
    # here, far below the errors measured).
    A = np.column_stack([wave_rhs(0.0, e) for e in np.eye(n)])
    exact = expm(T * A) @ wave_y0(n)
    step_counts = [60, 120, 240]
    # h = 3.33, 1.67, 0.83 <= the stable step 3.45; errors m=4: 4e-5, 1.3e-6, 4e-8 and m=1: 0.18,
    # 0.045, 0.011, all far above roundoff and (|h lambda| <= 0.33) in the asymptotic regime.
    assert T / step_counts[0] <= ivp.step_size(n)
    errors = [rel_err(solve(method, ivp, n, 0.0, T, steps), exact) for steps in step_counts]
    assert all(1e-11 < e < 1.0 for e in errors), errors
    orders = [math.log2(errors[i] / errors[i + 1]) for i in range(len(errors) - 1)]
    assert all(abs(p - expected) <= 0.3 for p in orders), (orders, errors)


@pytest.mark.parametrize("name", list(RHS_CASES))
def test_rhs_remembering_its_fixed_parts_gives_every_call_the_same_bits(name):
    """What does not depend on t or y is evaluated at the first call only; every later call, at
    other times and states, matches an evaluation of the whole code bit for bit."""
    ivp, n = ivp_named(name), RHS_CASES[name][0][-1]
    remembered, whole = right_hand_side(ivp, n), right_hand_side(ivp, n, remember=False)
    for seed, t in enumerate((0.0, 1.7, 6.0, 0.25)):     # Medakzo's phi(t) switches at t = 5
        y = _random_state(name, n, seed)
        assert np.array_equal(remembered(t, y), whole(t, y), equal_nan=True), (name, t)


def test_only_subtrees_free_of_t_and_the_state_are_remembered():
    from hybridtune.describe.expr import parse_expression
    from hybridtune.describe.nodes import walk
    from hybridtune.reference.rhs import fixed_subtrees
    code = parse_expression("pow(j * 0.5, 2.0) * %in[j + 1] + (t <= 5.0 ? 2.0 : 0.0) + sum(k, 0, 2, k * 1.0)")
    fixed = {str(node) for node in walk(code) if id(node) in fixed_subtrees(code)}
    assert any(text.startswith("Call(func='pow'") for text in fixed)
    assert any(text.startswith("Binary(op='+', left=Name(id='j')") for text in fixed)
    assert not any(text.startswith(("Input(", "Cond(", "Sum(", "Name(id='t')")) for text in fixed)
