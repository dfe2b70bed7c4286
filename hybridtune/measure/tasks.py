"""Measurement tasks of a configuration: generated C, the reference state, builds ahead of timing."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.scenario import Scenario
from hybridtune.errors import RequestError
from hybridtune.compiler.build import build_unit
from hybridtune.generate.cvariant import compile_units, generate_variant
from hybridtune.generate.pool import Variant
from hybridtune.measure.runner import (MeasureOptions, MeasureTask, Measurement, measure,
                                       runner_program, variant_library)
from hybridtune.reference.pirk import integrate
from hybridtune.reference.rhs import initial_values, right_hand_side


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask), never the machine's count."""
    return len(os.sched_getaffinity(0))


def thread_problems(threads: list[int]) -> list[str]:
    cores = usable_cores()
    return [f"{t} threads requested, this process may use {cores} cores" for t in threads
            if t > cores]


def layout_cores_problem(configs) -> str:
    """Where a multi-rank layout asks for more cores (ranks x threads per rank) than this process
    may use: a rank's measurement would share cores with another rank ('' where none does)."""
    cores = usable_cores()
    wider = sorted({(c.ranks, c.threads) for c in configs if c.ranks > 1 and
                    c.ranks * c.threads > cores})
    if not wider:
        return ""
    shown = ", ".join(f"{p} ranks x {t} threads" for p, t in wider)
    return f"{shown}: more cores than the {cores} this process may use"


def stable_step(ivp, n: int) -> float:
    h = ivp.step_size(n)
    if h is None or not np.isfinite(h) or h <= 0:
        raise RequestError(f"IVP {ivp.name} ({ivp.path}): measuring needs a positive "
                           f"'stable_step' (got {h})")
    return h


def reference_after(method, ivp, n: int, h: float, steps: int) -> np.ndarray:
    return integrate(method, right_hand_side(ivp, n), initial_values(ivp, n), 0.0, steps * h, steps)


def plan_tasks(scenario: Scenario, config: Configuration, variants: list[Variant],
               options: MeasureOptions = MeasureOptions(), reference: bool = True,
               generated: dict | None = None) -> list[MeasureTask]:
    """One task per variant: its C for this configuration and (unless reference is False: then
    with_reference adds it to the tasks that run) the reference state it must match. The C is
    generated once for the configurations of the scenario that share `generated` (per variant,
    method, IVP, and n and halo where the code has them: n is otherwise a run-time argument)."""
    skeletons = {s.name: s for s in scenario.skeletons}
    h = stable_step(config.ivp, config.n)
    state = reference_after(config.method, config.ivp, config.n, h, options.check_steps) \
        if reference else None
    fixed_n = config.n if scenario.specialise_n else None
    halo = config.ivp.halo(config.n) if any(
        "mpi_neighbour_exchange" in skeletons[v.skeleton].exchange_kinds() for v in variants) \
        else None
    generated = {} if generated is None else generated
    tasks = []
    for variant in variants:
        key = (variant.id, config.method.name, config.ivp.name, fixed_n, halo)
        code = generated.get(key)
        if code is None:
            code = generated[key] = generate_variant(
                variant, skeletons[variant.skeleton], scenario.template_map, config.method,
                config.ivp, fixed_n, halo)
        tasks.append(MeasureTask(code, config.method.name, config.ivp.name, config.n,
                                 config.threads, h, state, config.ranks))
    return tasks


def reference_key(config: Configuration, h: float, options: MeasureOptions) -> tuple:
    """What one reference state serves: the method, IVP, n, step and check steps."""
    return config.method.name, config.ivp.name, config.n, h, options.check_steps


def with_reference(tasks: list[MeasureTask], config: Configuration,
                   options: MeasureOptions = MeasureOptions(), kept: dict | None = None
                   ) -> list[MeasureTask]:
    """The tasks (all of one configuration) with the reference state they must match, computed
    once (and once for the configurations that share `kept`: per method, IVP, n and step)."""
    if not tasks:
        return []
    kept = {} if kept is None else kept
    key = reference_key(config, tasks[0].h, options)
    state = kept.get(key)
    if state is None:
        state = kept[key] = reference_after(config.method, config.ivp, config.n, tasks[0].h,
                                            options.check_steps)
    return [replace(task, reference=state) for task in tasks]


def reference_states(wanted: list[tuple[Configuration, list[MeasureTask]]],
                     options: MeasureOptions = MeasureOptions(), kept: dict | None = None,
                     workers: int | None = None) -> dict:
    """kept (the dict with_reference shares) with the reference state of each configuration
    whose tasks are wanted, the distinct ones computed side by side, one thread per usable core
    (the array work runs outside the GIL), the largest n first."""
    kept = {} if kept is None else kept
    todo = {}
    for config, tasks in wanted:
        if tasks:
            todo.setdefault(reference_key(config, tasks[0].h, options), (config, tasks[0].h))
    todo = {key: job for key, job in todo.items() if key not in kept}
    order = sorted(todo, key=lambda key: -key[2])
    if not order:
        return kept
    with ThreadPoolExecutor(max_workers=min(workers or usable_cores(), len(order))) as pool:
        states = pool.map(lambda key: reference_after(todo[key][0].method, todo[key][0].ivp,
                                                      key[2], key[3], key[4]), order)
        kept.update(zip(order, states))
    return kept


@dataclass(frozen=True)
class Prebuilt:
    """What building ahead did: the libraries compiled, found built, failed (id and message)."""
    variants: int
    compiled: int
    cached: int
    failed: tuple
    runners_ok: bool
    seconds: float

    def as_json(self) -> dict:
        return {**self.__dict__, "failed": [{"id": i, "message": m} for i, m in self.failed]}


def prebuild(generated: list, workers: int | None = None) -> Prebuilt:
    """Compile generated variants before any is timed, one gcc per usable core, and the runners
    they need (failures are kept for measure, which reports them)."""
    started = time.monotonic()
    units = {(name, text, variant.mpi) for variant in generated if not variant.one_file
             for name, text in compile_units(variant.code).items()}
    with ThreadPoolExecutor(max_workers=workers or usable_cores()) as pool:
        list(pool.map(lambda unit: build_unit(*unit), sorted(units)))   # a shared kernel once
        built = list(pool.map(variant_library, generated))
    runners = [runner_program(mpi) for mpi in sorted({variant.mpi for variant in generated})]
    return Prebuilt(len(built), sum(b.ok and not b.cached for b in built),
                    sum(b.cached for b in built),
                    tuple((g.variant_id, b.message[-500:]) for g, b in zip(generated, built)
                          if not b.ok),
                    all(r.ok for r in runners), time.monotonic() - started)


def measure_configuration(scenario: Scenario, config: Configuration, variants: list[Variant],
                          options: MeasureOptions = MeasureOptions(), on_result=None
                          ) -> list[Measurement]:
    """Generate, build, verify and time the variants of one configuration in this process."""
    tasks = plan_tasks(scenario, config, variants, options)
    prebuild([task.generated for task in tasks])
    results = []
    for task in tasks:
        result = measure(task, options)
        results.append(result)
        if on_result:
            on_result(result)
    return results
