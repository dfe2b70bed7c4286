"""Compiled solvers as Python objects through ctypes: a variant built here, or an exported library."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from hybridtune.describe.library import scenarios_dir
from hybridtune.describe.loader import load, load_named
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.measure.runner import variant_library
from hybridtune.generate.cvariant import GeneratedVariant, generate_variant
from hybridtune.generate.pool import select_variants


def generated_for(variant_id: str, method, ivp, scenario=None) -> GeneratedVariant:
    """The C of a variant of a scenario's pool (default scenario) for a method and an IVP."""
    if scenario is None or isinstance(scenario, (str, Path)):
        scenario = load(scenario or scenarios_dir() / "default.yaml", "scenario")
    variant = select_variants(scenario, method, [variant_id])[0]
    skeleton = {s.name: s for s in scenario.skeletons}[variant.skeleton]
    return generate_variant(variant, skeleton, scenario.template_map, method, ivp)


class _Compiled:
    """A compiled solver's context behind functions PREFIX_create, _state, _initial_values,
    _step and _destroy, and its integration."""

    n: int
    label: str

    def _open(self, path: Path, prefix: str) -> None:
        self._lib = ctypes.CDLL(str(path))
        self._prefix = prefix
        for call, restype, argtypes in (
                ("create", ctypes.c_void_p, [ctypes.c_long]),
                ("state", ctypes.POINTER(ctypes.c_double), [ctypes.c_void_p]),
                ("initial_values", None, [ctypes.c_void_p]),
                ("step", None, [ctypes.c_void_p, ctypes.c_double, ctypes.c_double]),
                ("destroy", None, [ctypes.c_void_p])):
            function = self._function(call)
            function.restype, function.argtypes = restype, argtypes

    def _function(self, call: str):
        return getattr(self._lib, f"{self._prefix}_{call}")

    def _attach(self, ctx, why: str) -> None:
        if not ctx:
            raise HybridtuneError(f"{self.label}: {self._prefix}_create returned NULL for "
                                  f"n = {self.n} ({why})")
        self._ctx = ctx
        self._state = np.ctypeslib.as_array(self._function("state")(ctx), shape=(self.n,))

    def integrate(self, t0: float, t1: float, steps: int, y0=None) -> np.ndarray:
        """y(t1) after `steps` fixed steps from y(t0) = y0 (default: the IVP's initial values)."""
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise RequestError(f"steps: expected a positive number of steps, got {steps}")
        if not (np.isfinite(t0) and np.isfinite(t1)) or t1 <= t0:
            raise RequestError(f"t0/t1: expected finite t0 < t1, got t0 = {t0}, t1 = {t1}")
        if y0 is None:
            self._function("initial_values")(self._ctx)
        else:
            y0 = np.asarray(y0, dtype=float)
            if y0.shape != (self.n,):
                raise RequestError(f"y0: expected {self.n} components, got shape {y0.shape}")
            self._state[:] = y0
        h = (t1 - t0) / steps
        step = self._function("step")
        for k in range(steps):
            step(self._ctx, t0 + k * h, h)
        return self._state.copy()

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            self._function("destroy")(self._ctx)
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def _check_threads(threads: int | None) -> None:
    if threads is not None and (isinstance(threads, bool) or threads < 1):
        raise RequestError(f"threads: expected a count >= 1, got {threads}")


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        ctypes.CDLL("libgomp.so.1").omp_set_num_threads(int(threads))


class Solver(_Compiled):
    """Integrates an IVP with a compiled variant: Solver(variant, method, ivp, n).integrate(t0, t1,
    steps); scenario: the pool's scenario (a loaded one or its path; default scenario)."""

    def __init__(self, variant: str, method, ivp, n: int, threads: int | None = None,
                 scenario=None):
        self.method = load_named("method", method, Path.cwd()) if isinstance(method, str) else method
        self.ivp = load_named("ivp", ivp, Path.cwd()) if isinstance(ivp, str) else ivp
        self.ivp.check_n(n)
        self.n = n
        _check_threads(threads)
        generated = generated_for(variant, self.method, self.ivp, scenario)
        self.variant_id = self.label = generated.variant_id
        built = variant_library(generated)
        if not built.ok:
            raise HybridtuneError(f"{built.source}: compile error:\n{built.message}")
        self.source = built.source
        self._open(built.path, "ht")
        _set_threads(threads)
        self._attach(self._function("create")(n), "allocation failed")


class TunedSolver(_Compiled):
    """An exported library (export --tuned or --variant), built by its Makefile, integrating its
    IVP: TunedSolver(folder, n).integrate(t0, t1, steps). name: the library's --name (default:
    the folder's one lib*.so); adapt: a tuned library times its rule's candidates during the
    first steps (NAME_ADAPT)."""

    def __init__(self, folder, n: int, threads: int | None = None, name: str | None = None,
                 adapt: bool = False):
        folder = Path(folder)
        self.name = name or _library_name(folder)
        path = folder / f"lib{self.name}.so"
        if not path.is_file():
            raise RequestError(f"{path}: no such library: build it first (make -C {folder})")
        self.n = n
        self.label = str(path)
        self._open(path, self.name)
        valid = self._function("valid_n")
        valid.argtypes = [ctypes.c_long]
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not valid(n):
            raise RequestError(f"{path}: n = {n} is not valid for its IVP "
                               f"({self.name}_valid_n; see {self.name}.h)")
        _check_threads(threads)
        self.tuned = hasattr(self._lib, f"{self.name}_create_options")
        if adapt and not self.tuned:
            raise RequestError(f"{path}: adapt: a library of one variant has no candidates "
                               "(export --tuned --candidates K)")
        _set_threads(threads)
        if self.tuned:
            create = self._function("create_options")
            create.restype = ctypes.c_void_p
            create.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_int]
            every = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
            ctx = create(n, threads or every, 1 if adapt else 0)
        else:
            ctx = self._function("create")(n)
        self._attach(ctx, "no rule for this rank count, or allocation failed" if self.tuned
                     else "allocation failed")
        step = self._function("stable_step")
        step.restype, step.argtypes = ctypes.c_double, [ctypes.c_long]
        self.stable_step = float(step(n))

    @property
    def chosen_variant(self) -> str:
        """The variant that runs now (while adapting, the table's choice)."""
        function = self._function("chosen_variant" if self.tuned else "variant_id")
        function.restype = ctypes.c_char_p
        function.argtypes = [ctypes.c_void_p] if self.tuned else []
        return (function(self._ctx) if self.tuned else function()).decode()

    def _chosen(self, what: str, otherwise: int) -> int:
        if not self.tuned:
            return otherwise
        function = self._function(f"chosen_{what}")
        function.argtypes = [ctypes.c_void_p]
        return int(function(self._ctx))

    @property
    def chosen_threads(self) -> int:
        every = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
        return self._chosen("threads", every)

    @property
    def candidates(self) -> int:
        """The candidates the library times or timed (1: none)."""
        return self._chosen("candidates", 1)

    @property
    def adapting(self) -> bool:
        """Whether it still times its candidates."""
        return bool(self._chosen("adapting", 0))


def _library_name(folder: Path) -> str:
    found = sorted(p.name[3:-3] for p in folder.glob("lib*.so"))
    if not found:
        raise RequestError(f"{folder}: no built library lib<name>.so: build it first "
                           f"(make -C {folder})")
    if len(found) > 1:
        raise RequestError(f"{folder}: {len(found)} libraries ({', '.join(found)}): name one")
    return found[0]
