"""Measures one generated variant in a child process: build, check against the reference, time."""

from __future__ import annotations

import math
import random
import time
import uuid
from dataclasses import dataclass, field, replace

import numpy as np

from hybridtune.generate.cvariant import GeneratedVariant, compile_units
from hybridtune.compiler.build import BuildResult, build, build_linked, is_linked, native_source
from hybridtune.measure.load import RETIMINGS, Watch, doubts, quietest
from hybridtune.measure import race
from hybridtune.measure.runner_child import INTERRUPTED, ChildFailed, RunnerChild
from hybridtune.measure.provenance import (build_identity, code_sha256, hardware_identity,
                                          node_name)
from hybridtune.measure.repetitions import ceiling, repeat, steps_per_repetition
from hybridtune.measure.statistics import median_ci, relative_half_width

STATUSES = ("ok", "compile_error", "crash", "timeout", "wrong_result")
LAUNCH_ATTEMPTS = 3        # starts of a step across nodes whose MPI start failed
MPI_START_FAILED = "MPI_Init_thread("   # in mpich's error stack where its start failed


@dataclass(frozen=True)
class MeasureOptions:
    ci_target: float = 0.02       # stop when the 95% CI of the median is within +-2%
    budget_s: float = 5.0         # or when this much timing was spent
    min_repetitions: int = 6
    max_repetitions: int = 200
    repetition_s: float = 0.02    # steps per repetition chosen so one takes about this long
    repetition_limit: float = 10.0   # and one ends after this many times that, whatever its steps
    #                                  (a load that preempts threads at every barrier can slow the
    #                                  steps a thousandfold after they were counted)
    overrun: float = 5.0          # a timing is cut short after this many times what its budget or
    #                               its least repetitions need (its interval unbounded: flagged)
    warmup_steps: int = 2
    check_steps: int = 3
    tolerance: float = 1e-10      # max |y - y_ref| / max |y_ref| after check_steps steps
    timeout_s: float = 60.0       # for any single command of the child
    slower_than_s: float = math.inf   # a timing ends once its interval lies wholly above this
    #                                   (a search's best held and a margin: measure/repetitions)


@dataclass(frozen=True)
class MeasureTask:
    """Everything needed to measure a variant; who scheduled it is not its concern."""
    generated: GeneratedVariant
    method: str
    ivp: str
    n: int
    threads: int
    h: float
    reference: np.ndarray = field(repr=False, compare=False, default=None)  # after check_steps
    ranks: int = 1                # MPI ranks, each with `threads` threads (MPI variants only)
    span: int = 1                 # the nodes the ranks span (a step across nodes where > 1)
    hosts: tuple = ()             # which nodes, named when the task is dispatched


@dataclass(frozen=True)
class Measurement:
    id: str
    method: str
    ivp: str
    n: int
    threads: int
    status: str
    ranks: int = 1
    nodes: int = 1                # the nodes the ranks spanned
    median_s: float | None = None     # time per step
    ci_low_s: float | None = None
    ci_high_s: float | None = None
    ci_rel: float | None = None
    repetitions: int = 0
    steps_per_repetition: int = 0
    check_error: float | None = None
    message: str = ""
    node: str = ""
    source: str = ""
    code_sha256: str = ""
    generator_version: str = ""
    build_id: str = ""
    compiler: str = ""
    compiler_flags: str = ""
    hardware_id: str = ""
    hardware: dict = field(default_factory=dict, compare=False)
    ci_target: float | None = None
    budget_s: float | None = None
    timing: str = "alone"       # or "interleaved": re-timed in turn with close contenders

    @property
    def interrupted(self) -> bool:
        """The child was stopped by a shutdown signal (the job's, not the variant's doing): not a
        result, never stored."""
        return self.status == "crash" and self.message.startswith(INTERRUPTED)

    def as_row(self) -> dict:
        """A row of the store's measurements table: the record with a new row_id."""
        return {**self.as_json(), "row_id": uuid.uuid4().hex}

    def as_json(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in self.__dict__.items()}


def runner_program(mpi: bool = False) -> BuildResult:
    """The program that loads a variant library: ht_runner, or ht_mpi_runner for MPI variants."""
    name = "ht_mpi_runner" if mpi else "ht_runner"
    return build(name, {name + ".c": native_source(name + ".c")}, shared=False, mpi=mpi)


def variant_library(generated: GeneratedVariant) -> BuildResult:
    """The variant's library, linked from one object per kernel (compiled once for all the
    variants that call it) and one for the rest; one file where the variant says so."""
    return build_linked("variant", _units(generated), generated.code, mpi=generated.mpi)


def variant_built(generated: GeneratedVariant) -> bool:
    """Whether variant_library would find the variant built (nothing is compiled)."""
    return is_linked("variant", _units(generated), mpi=generated.mpi)


def _units(generated: GeneratedVariant) -> dict[str, str]:
    return {"variant.c": generated.code} if generated.one_file else compile_units(generated.code)


def _provenance(task: MeasureTask, options: MeasureOptions) -> dict:
    return dict(id=task.generated.variant_id, method=task.method, ivp=task.ivp, n=task.n,
                threads=task.threads, ranks=task.ranks, nodes=task.span,
                node=",".join(task.hosts) or node_name(), code_sha256=code_sha256(task.generated.code),
                ci_target=options.ci_target, budget_s=options.budget_s, **build_identity(),
                **hardware_identity())


def measure(task: MeasureTask, options: MeasureOptions = MeasureOptions(), hosts: tuple = ()
            ) -> Measurement:
    """Build, verify and time one variant (its ranks across `hosts` where named), timed again
    where the host was busy or the interval is too wide (measure/load); every failure becomes a
    status, never an exception."""
    task = replace(task, hosts=tuple(hosts)) if hosts else task
    base = _provenance(task, options)
    runner = runner_program(task.generated.mpi)
    if not runner.ok:
        return Measurement(**base, status="compile_error", message=f"{runner.source}: "
                           f"{runner.message}")
    library = variant_library(task.generated)
    base["source"] = str(library.source)
    if not library.ok:
        return Measurement(**base, status="compile_error",
                           message=f"{library.source}: {library.message}")
    child, state, failure = _started(str(runner.path), str(library.path), task, options,
                                     _checked(task, options))
    if failure is not None:
        return Measurement(**base, status=failure.status, message=failure.message)
    try:
        scale = float(np.max(np.abs(task.reference)))
        error = float(np.max(np.abs(state - task.reference))) / scale if scale > 0 else \
            float(np.max(np.abs(state)))
        if not (math.isfinite(error) and error <= options.tolerance):
            return Measurement(**base, status="wrong_result", check_error=error if math.isfinite(
                error) else None, message=f"after {options.check_steps} steps the state differs "
                f"from the reference by {error:.3g} (relative max norm; tolerance "
                f"{options.tolerance:g})")
        steps, planned_s = _calibrate(child, task, options)
        samples, load = _until_sound(lambda: {task: _time(child, task, options, steps, planned_s)},
                                     [child.process.pid], task)
        samples = samples[task]
        child.send("finite")
        if child.read().strip() != b"1":
            return Measurement(**base, status="wrong_result", check_error=error,
                               message="the state is not finite after timing")
    except ChildFailed as failure:
        return Measurement(**base, status=failure.status, message=failure.message)
    finally:
        child.close()
    return _timed(base, samples, steps, load, check_error=error)


def _started(runner: str, library: str, task: MeasureTask, options: MeasureOptions, first
             ) -> tuple[RunnerChild | None, object, ChildFailed | None]:
    """The runner started and what first(child) answers (its first exchange), or why not. A step
    across nodes whose MPI start failed (the launcher's doing: the variant runs after MPI_Init) is
    started again, up to LAUNCH_ATTEMPTS times."""
    attempt = 1
    while True:
        child = RunnerChild(runner, library, task, options.timeout_s)
        try:
            return child, first(child), None
        except ChildFailed as failure:
            child.close()
            if not (task.hosts and MPI_START_FAILED in failure.message):
                return None, None, failure
            if attempt == LAUNCH_ATTEMPTS:
                return None, None, ChildFailed(failure.status, f"MPI did not start in "
                                                f"{attempt} attempts; the last: {failure.message}")
        attempt += 1


def _checked(task: MeasureTask, options: MeasureOptions):
    """The first exchange of a measurement: the state after the check steps."""
    def first(child: RunnerChild) -> np.ndarray:
        child.send(f"check 0.0 {task.h!r} {options.check_steps}")
        return np.frombuffer(child.read(8 * task.n), dtype=np.float64)
    return first


def _timed(base: dict, samples: list[float], steps: int, load: dict | None, message: str = "",
           **fields) -> Measurement:
    """An ok measurement: the median of the samples and its confidence interval; the load while
    it was timed goes under hardware's "load", with its doubts (measure/load), which the message
    names too."""
    median, low, high = median_ci(samples)
    ci_rel = relative_half_width(median, low, high)
    why = doubts(ci_rel, load)
    if load is not None:
        base = {**base, "hardware": {**base["hardware"], "load": {**load, "doubts": why}}}
    return Measurement(**base, status="ok", median_s=median, ci_low_s=low, ci_high_s=high,
                       ci_rel=ci_rel, repetitions=len(samples), steps_per_repetition=steps,
                       message="; ".join(part for part in (message, *why) if part), **fields)


def _until_sound(time_once, roots: list, task: MeasureTask) -> tuple[dict, dict]:
    """Time (time_once() -> task -> samples) with the host's load watched (not across nodes: it
    is theirs), again while a timed task's interval is too wide or the host was busy
    (measure/load), at most RETIMINGS more times; the quietest attempt's samples and its load
    record, which counts the attempts."""
    attempts = []
    for _ in range(1 + RETIMINGS):
        watch = None if task.hosts else Watch(roots, task.threads * task.ranks)
        samples = time_once()
        load = watch.load() if watch is not None else None
        widths = [relative_half_width(*median_ci(s)) for s in samples.values() if s]
        attempts.append((samples, widths, load))
        if not any(doubts(width, load) for width in widths):
            break
    samples, _, load = attempts[quietest([(widths, load) for _, widths, load in attempts])]
    return samples, {**(load or {}), "timings": len(attempts)}


def _calibrate(child: RunnerChild, task: MeasureTask, options: MeasureOptions) -> tuple[int, float]:
    """Warm up, then the steps per repetition that make one repetition about repetition_s, and
    how long one of them should take."""
    h = repr(task.h)
    child.send(f"warmup 0.0 {h} {options.warmup_steps}")
    child.read()
    child.send(f"rep 0.0 {h} 1")
    one_step = float(child.read())
    steps = steps_per_repetition(one_step, options.repetition_s)
    return steps, steps * one_step


def _repetition(task: MeasureTask, steps: int, options: MeasureOptions) -> str:
    """The runner's command for one repetition of steps steps, ended early where it overruns
    (the MPI runner runs them all: its ranks would have to agree where to stop)."""
    return f"rep 0.0 {task.h!r} {steps} {options.repetition_limit * options.repetition_s!r}"


def _time(child: RunnerChild, task: MeasureTask, options: MeasureOptions, steps: int,
          planned_s: float) -> list[float]:
    """Repetitions of steps steps (planned_s seconds each) under the timing protocol's stop rule
    (measure/repetitions)."""
    def once() -> float:
        child.send(_repetition(task, steps, options))
        return float(child.read())

    return repeat(once, options, ceiling(options, planned_s, options.min_repetitions))


def retime_interleaved(tasks: list[MeasureTask], options: MeasureOptions = MeasureOptions(),
                       hosts: tuple = (), min_rounds: int = 10) -> list[Measurement]:
    """Time verified variants again, one repetition of each in turn (a fresh random order each
    round) so that drifting load falls on all alike: at least min_rounds rounds, then until the
    race is settled (measure/race), their budgets are spent or max_repetitions rounds ran; all
    again (at most RETIMINGS times) where the host was busy or an interval too wide
    (measure/load). A child that fails is a status. Named hosts: every task's ranks across them."""
    tasks = [replace(task, hosts=tuple(hosts)) for task in tasks] if hosts else tasks
    children, results, steps, planned = {}, {}, {}, {}

    def failed(task, status, message):
        results[task] = Measurement(**_provenance(task, options), status=status, message=message)
        child = children.pop(task, None)
        if child is not None:
            child.close()

    try:
        for task in tasks:
            runner, library = runner_program(task.generated.mpi), variant_library(task.generated)
            if not runner.ok or not library.ok:
                failed(task, "compile_error", library.message or runner.message)
                continue
            child, calls, failure = _started(str(runner.path), str(library.path), task,
                                             options, lambda c, t=task: _calibrate(c, t, options))
            if failure is not None:
                failed(task, failure.status, failure.message)
                continue
            children[task], (steps[task], planned[task]) = child, calls

        def rounds_once() -> dict:
            samples = {task: [] for task in children}
            started, rounds = time.monotonic(), 0
            most_s = ceiling(options, sum(planned.values()), min_rounds, len(children))
            while children and rounds < options.max_repetitions:
                for task in random.sample(list(children), len(children)):
                    try:
                        children[task].send(_repetition(task, steps[task], options))
                        samples[task].append(float(children[task].read()))
                    except ChildFailed as failure:
                        failed(task, failure.status, failure.message)
                rounds += 1
                spent = time.monotonic() - started
                if spent > most_s or rounds >= min_rounds and (
                        spent > options.budget_s * len(tasks)
                        or race.settled({t: median_ci(samples[t]) for t in children})):
                    break
            return {task: samples[task] for task in children}

        samples, load = _until_sound(rounds_once, [c.process.pid for c in children.values()],
                                     tasks[0]) if children else ({}, None)
    finally:
        for child in children.values():
            child.close()
    for task in children:
        results[task] = _timed(_provenance(task, options), samples[task], steps[task], load,
                               timing="interleaved",
                               message=f"re-timed interleaved with {len(tasks) - 1} other "
                                       "variant(s)")
    return [results[task] for task in tasks]
