"""The stages in order: scenario -> pool -> generated C -> measurements (the only place besides the CLI that knows the order)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hybridtune.describe.scenario import Scenario
from hybridtune.errors import RequestError
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import Variant, build_pool
from hybridtune.measure.build import build
from hybridtune.measure.runner import (MeasureOptions, MeasureTask, Measurement, measure,
                                       runner_program)
from hybridtune.reference.pirk import integrate
from hybridtune.reference.rhs import initial_values, right_hand_side


@dataclass(frozen=True)
class Configuration:
    method: object
    ivp: object
    n: int
    threads: int


def pool_for(scenario: Scenario, method) -> dict[str, Variant]:
    return {v.id: v for v in build_pool(scenario.skeletons, scenario.template_map, method).variants}


def select_variants(scenario: Scenario, method, ids: list[str] | None) -> list[Variant]:
    pool = pool_for(scenario, method)
    if not ids:
        return list(pool.values())
    aliases = {alias: v for v in pool.values() for alias in v.same_as}
    unknown = [i for i in ids if i not in pool and i not in aliases]
    if unknown:
        raise RequestError(f"--variant: unknown variant id(s) {', '.join(unknown)} in scenario "
                           f"{scenario.name} for method {method.name}; `hybridtune variants "
                           f"{scenario.path}` lists the {len(pool)} ids")
    return [pool.get(i) or aliases[i] for i in dict.fromkeys(ids)]


def thread_problems(threads: list[int]) -> list[str]:
    cores = os.cpu_count() or 1
    return [f"{t} threads requested, this machine has {cores} cores" for t in threads if t > cores]


def configurations(scenario: Scenario, n: int | None, threads: list[int] | None):
    for method in scenario.methods:
        for ivp in scenario.ivps:
            sizes = [n] if n is not None else list(scenario.sizes.for_ivp(ivp))
            for size in sizes:
                ivp.check_n(size)
                for t in threads or scenario.threads:
                    yield Configuration(method, ivp, size, t)


def stable_step(ivp, n: int) -> float:
    h = ivp.step_size(n)
    if h is None or not np.isfinite(h) or h <= 0:
        raise RequestError(f"IVP {ivp.name} ({ivp.path}): measuring needs a positive "
                           f"'stable_step' (got {h})")
    return h


def reference_after(method, ivp, n: int, h: float, steps: int) -> np.ndarray:
    return integrate(method, right_hand_side(ivp, n), initial_values(ivp, n), 0.0, steps * h, steps)


def prebuild(generated: list) -> None:
    """Compile the variants before any is timed, one gcc per core (failures are kept for measure)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(lambda code: build("variant", {"variant.c": code.code}, shared=True),
                      generated))
    runner_program()


def measure_configuration(scenario: Scenario, config: Configuration, variants: list[Variant],
                          options: MeasureOptions = MeasureOptions(), on_result=None
                          ) -> list[Measurement]:
    """Generate, build, verify and time the variants for one (method, IVP, n, threads)."""
    skeletons = {s.name: s for s in scenario.skeletons}
    h = stable_step(config.ivp, config.n)
    reference = reference_after(config.method, config.ivp, config.n, h, options.check_steps)
    fixed_n = config.n if scenario.specialise_n else None
    generated = [generate_variant(variant, skeletons[variant.skeleton], scenario.template_map,
                                  config.method, config.ivp, fixed_n) for variant in variants]
    prebuild(generated)
    results = []
    for code in generated:
        task = MeasureTask(code, config.method.name, config.ivp.name, config.n,
                           config.threads, h, reference)
        result = measure(task, options)
        results.append(result)
        if on_result:
            on_result(result)
    return results
