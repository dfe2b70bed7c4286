"""A tuned variant as a Python object: the generated C, compiled and called through ctypes."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from hybridtune.describe.library import scenarios_dir
from hybridtune.describe.loader import load, load_named
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.compiler.build import build
from hybridtune.generate.cvariant import GeneratedVariant, generate_variant
from hybridtune.generate.pool import select_variants


def generated_for(variant_id: str, method, ivp, scenario=None) -> GeneratedVariant:
    """The C of a variant of a scenario's pool (default scenario) for a method and an IVP."""
    scenario = scenario or load(scenarios_dir() / "default.yaml", "scenario")
    variant = select_variants(scenario, method, [variant_id])[0]
    skeleton = {s.name: s for s in scenario.skeletons}[variant.skeleton]
    return generate_variant(variant, skeleton, scenario.template_map, method, ivp)


class Solver:
    """Integrates an IVP with a compiled variant: Solver(variant, method, ivp, n).integrate(t0, t1, steps)."""

    def __init__(self, variant: str, method, ivp, n: int, threads: int | None = None,
                 scenario=None):
        self.method = load_named("method", method, Path.cwd()) if isinstance(method, str) else method
        self.ivp = load_named("ivp", ivp, Path.cwd()) if isinstance(ivp, str) else ivp
        self.ivp.check_n(n)
        self.n = n
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise RequestError(f"threads: expected a count >= 1, got {threads}")
        generated = generated_for(variant, self.method, self.ivp, scenario)
        self.variant_id = generated.variant_id
        built = build("variant", {"variant.c": generated.code}, shared=True)
        if not built.ok:
            raise HybridtuneError(f"{built.source}: compile error:\n{built.message}")
        self.source = built.source
        self._lib = ctypes.CDLL(str(built.path))
        self._lib.ht_create.restype = ctypes.c_void_p
        self._lib.ht_create.argtypes = [ctypes.c_long]
        self._lib.ht_state.restype = ctypes.POINTER(ctypes.c_double)
        self._lib.ht_state.argtypes = [ctypes.c_void_p]
        self._lib.ht_initial_values.argtypes = [ctypes.c_void_p]
        self._lib.ht_step.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double]
        self._lib.ht_destroy.argtypes = [ctypes.c_void_p]
        if threads is not None:
            ctypes.CDLL("libgomp.so.1").omp_set_num_threads(int(threads))
        self._ctx = self._lib.ht_create(n)
        if not self._ctx:
            raise HybridtuneError(f"variant {self.variant_id}: allocation failed for n = {n}")
        self._state = np.ctypeslib.as_array(self._lib.ht_state(self._ctx), shape=(n,))

    def integrate(self, t0: float, t1: float, steps: int, y0=None) -> np.ndarray:
        """y(t1) after `steps` fixed steps from y(t0) = y0 (default: the IVP's initial values)."""
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise RequestError(f"steps: expected a positive number of steps, got {steps}")
        if not (np.isfinite(t0) and np.isfinite(t1)) or t1 <= t0:
            raise RequestError(f"t0/t1: expected finite t0 < t1, got t0 = {t0}, t1 = {t1}")
        if y0 is None:
            self._lib.ht_initial_values(self._ctx)
        else:
            y0 = np.asarray(y0, dtype=float)
            if y0.shape != (self.n,):
                raise RequestError(f"y0: expected {self.n} components, got shape {y0.shape}")
            self._state[:] = y0
        h = (t1 - t0) / steps
        for k in range(steps):
            self._lib.ht_step(self._ctx, t0 + k * h, h)
        return self._state.copy()

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            self._lib.ht_destroy(self._ctx)
            self._ctx = None

    def __enter__(self) -> "Solver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
