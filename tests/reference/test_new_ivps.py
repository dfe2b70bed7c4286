"""The five IVPs added to the library against the mathematics written out in numpy here, independently of their YAML."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.reference.pirk import integrate
from hybridtune.reference.rhs import initial_values, right_hand_side

RHS_TOL = 1e-12     # the same formulas in double precision, rounded in another order


@lru_cache(maxsize=None)
def ivp_named(name: str):
    return load_named("ivp", name, PROJECT_ROOT)


def rel_err(got, want) -> float:
    assert got.shape == want.shape and np.all(np.isfinite(got)) and np.all(np.isfinite(want))
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


# --- the mathematics --------------------------------------------------------------------------

def brusselator_rhs(y):
    """BRUSS-2D: A = 1, B = 3.4, alpha = 0.002, periodic g x g grid of spacing 1/g, u then v."""
    g = round(np.sqrt(y.size / 2))
    u, v = y[:g * g].reshape(g, g), y[g * g:].reshape(g, g)

    def lap(w):
        return (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1)
                - 4.0 * w) * g * g

    du = 1.0 + u * u * v - 4.4 * u + 0.002 * lap(u)
    dv = 3.4 * u - u * u * v + 0.002 * lap(v)
    return np.concatenate([du.ravel(), dv.ravel()])


def brusselator_y0(n):
    g = round(np.sqrt(n / 2))
    x = np.arange(g) / g
    u = np.repeat(22.0 * x * (1.0 - x) ** 1.5, g)            # u(0) = 22 y (1 - y)^1.5, y = row
    v = np.tile(27.0 * x * (1.0 - x) ** 1.5, g)              # v(0) = 27 x (1 - x)^1.5, x = column
    return np.concatenate([u, v])


def diffusion_rhs(y):
    """Seven-point Laplacian on the g^3 interior points of the unit cube, zero outside."""
    g = round(y.size ** (1 / 3))
    u = np.pad(y.reshape(g, g, g), 1)
    c = u[1:-1, 1:-1, 1:-1]
    lap = (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
           + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] - 6.0 * c)
    return (lap * (g + 1.0) ** 2).ravel()


def diffusion_y0(n):
    g = round(n ** (1 / 3))
    s = np.sin(np.pi * np.arange(1, g + 1) / (g + 1))
    return (s[:, None, None] * s[None, :, None] * s[None, None, :]).ravel()


def stiff_rhs(c):
    """Arrhenius chain: rates k_j (c_j^2 + 1e-4)^0.75, k_j = 1e4 exp(-14 / (1 + 2 j / n)), a feed
    of 1 into c_0, diffusion with D = 1 and no flux through the ends."""
    n = c.size
    k = 1.0e4 * np.exp(-14.0 / (1.0 + 2.0 * np.arange(n) / n))
    r = k * (c * c + 1.0e-4) ** 0.75
    f = -r
    f[1:] += r[:-1]
    f[0] += 1.0
    padded = np.concatenate([c[:1], c, c[-1:]])
    return f + padded[:-2] - 2.0 * c + padded[2:]


def stiff_y0(n):
    return 0.5 + 0.5 * np.cos(np.pi * np.arange(n) / n)


def nbody_rhs(y):
    """G = 1, masses 1/N, Plummer softening eps^2 = 0.01, layout x | y | z | vx | vy | vz."""
    N = y.size // 6
    p, v = y[:3 * N].reshape(3, N).T, y[3 * N:].reshape(3, N).T
    d = p[None, :, :] - p[:, None, :]                         # d[i, k] = p_k - p_i
    r2 = (d * d).sum(axis=2) + 0.01
    a = (d / (r2 * np.sqrt(r2))[:, :, None]).sum(axis=1) / N
    return np.concatenate([v.T.ravel(), a.T.ravel()])


def nbody_y0(n):
    i = np.arange(n // 6)
    x, y, z = np.sin(1.3 * i + 0.1), np.sin(2.1 * i + 0.7), np.sin(3.7 * i + 1.1)
    return np.concatenate([x, y, z, -0.3 * y, 0.3 * x, 0.0 * i])


def lorenz_rhs(y):
    """Lorenz-96 with F = 8 on a ring."""
    return (np.roll(y, -1) - np.roll(y, 2)) * np.roll(y, 1) - y + 8.0


def lorenz_y0(n):
    y = np.full(n, 8.0)
    y[0] += 0.01
    return y


# name: (sizes, mathematics, initial values, the range of a random state)
CASES = {
    "Brusselator2D": ((18, 32, 200), brusselator_rhs, brusselator_y0, (0.0, 5.0)),
    "Diffusion3D": ((27, 64, 343), diffusion_rhs, diffusion_y0, (-1.0, 1.0)),
    "StiffExp": ((3, 4, 50), stiff_rhs, stiff_y0, (0.0, 2.0)),
    "NBody": ((12, 18, 120), nbody_rhs, nbody_y0, (-1.0, 1.0)),
    "Lorenz96": ((4, 5, 40), lorenz_rhs, lorenz_y0, (-10.0, 10.0)),
}


@pytest.mark.parametrize("name,n", [(name, n) for name, case in CASES.items() for n in case[0]])
def test_rhs_matches_the_mathematics(name, n):
    _, rhs, _, (low, high) = CASES[name]
    f = right_hand_side(ivp_named(name), n)
    for seed in range(2):
        y = np.random.default_rng(seed).uniform(low, high, n)
        err = rel_err(f(seed * 0.7, y), rhs(y))
        assert err <= RHS_TOL, f"{name} n={n} seed={seed}: relative error {err:.3e}"


@pytest.mark.parametrize("name,n", [(name, n) for name, case in CASES.items() for n in case[0]])
def test_initial_values_match_the_mathematics(name, n):
    err = rel_err(initial_values(ivp_named(name), n), CASES[name][2](n))
    assert err <= RHS_TOL, f"{name} n={n}: relative error {err:.3e}"


@pytest.mark.parametrize("name", list(CASES))
def test_the_smallest_sizes_are_the_tested_ones_and_steps_are_positive(name):
    ivp = ivp_named(name)
    assert ivp.sizes.samples()[0] == CASES[name][0][0]
    for n in ivp.sizes.samples():
        h = ivp.step_size(n)
        assert h is not None and np.isfinite(h) and h > 0, (name, n, h)


@pytest.mark.parametrize("name,n,distance", [
    ("Brusselator2D", 200, 100), ("Diffusion3D", 125, 25), ("StiffExp", 50, 1), ("NBody", 60, 59),
    ("Lorenz96", 40, 39)])
def test_access_distance_and_description(name, n, distance):
    ivp = ivp_named(name)
    assert ivp.access_distance(n) == distance
    assert "access distance" in ivp.description


@pytest.mark.parametrize("g", [3, 4, 7])
def test_diffusion3d_initial_values_are_an_eigenvector(g):
    ivp = ivp_named("Diffusion3D")
    y0 = initial_values(ivp, g ** 3)
    dh = 1.0 / (g + 1)
    lam = -3.0 * 4.0 / dh ** 2 * np.sin(np.pi * dh / 2) ** 2
    assert rel_err(right_hand_side(ivp, g ** 3)(0.0, y0), lam * y0) <= RHS_TOL


@pytest.mark.parametrize("name,n", [("Brusselator2D", 50), ("Diffusion3D", 64), ("StiffExp", 30),
                                    ("NBody", 24), ("Lorenz96", 20)])
def test_stable_step_integrates_like_half_the_step(name, n):
    """At the IVP's stable_step the PIRK reference stays finite and agrees with twice as many
    steps of half the size (an unstable corrector iteration would not)."""
    ivp = ivp_named(name)
    method = load_named("method", "radauIIA5", PROJECT_ROOT)
    h = ivp.step_size(n)
    f, y0 = right_hand_side(ivp, n), initial_values(ivp, n)
    coarse = integrate(method, f, y0, 0.0, 8 * h, 8)
    fine = integrate(method, f, y0, 0.0, 8 * h, 16)
    assert np.all(np.isfinite(coarse)) and rel_err(coarse, fine) <= 1e-6


def test_nbody_conserves_momentum():
    y = np.random.default_rng(3).uniform(-1.0, 1.0, 60)
    accelerations = right_hand_side(ivp_named("NBody"), 60)(0.0, y)[30:].reshape(3, 10)
    assert np.allclose(accelerations.sum(axis=1), 0.0, atol=1e-13)
