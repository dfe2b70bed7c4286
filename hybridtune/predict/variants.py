"""Variant predictions: theta = sum over kernels of phi times calls per step, plus communication."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from hybridtune.describe.expr import Name
from hybridtune.describe.looplang import loops_and_directives
from hybridtune.describe.machine import Machine
from hybridtune.describe.skeleton import Skeleton, kernel_call
from hybridtune.generate.kerncraft_form import ELEMENT_BYTES, KerncraftForm
from hybridtune.generate.size_expressions import N
from hybridtune.generate.pool import Variant
from hybridtune.predict.kernels import LoopJob, LoopPrediction
from hybridtune.predict.superstep import StepCommunication
from hybridtune.predict.working_set import evaluator, level_for


@dataclass(frozen=True)
class VariantPrediction:
    """Predicted seconds per time step of one variant for one (method, IVP, n, threads)."""
    id: str
    skeleton: str
    method: str
    ivp: str
    n: int
    threads: int
    status: str                      # "ok" or "failed" (never ranked)
    predicted_s: float = float("nan")
    t_com_s: float = 0.0
    barriers: int = 0
    kernels: tuple = field(default=(), compare=False)   # per kernel: dict breakdown
    message: str = ""
    rank: int = 0
    ranks: int = 1                   # MPI ranks (threads is per rank)
    comm_bytes: float = 0.0          # bytes one rank sends per step


def calls_per_step(skeleton: Skeleton, template: str, m: int, s: int) -> int:
    return skeleton.count(lambda d: d.name == "KERNEL" and d.args[0] == template, m, s)


def _region(job: LoopJob, level: str, machine: Machine):
    """The job's region of that level, else the nearest one in the order of the levels."""
    names = [lvl.name for lvl in machine.levels]
    wanted = names.index(level)
    return min(job.regions, key=lambda r: (abs(names.index(r.level) - wanted), -names.index(r.level)))


def part_seconds(job: LoopJob, prediction: LoopPrediction, machine: Machine, n: int,
                 cores: int) -> float:
    """phi = alpha(cores) * iterations / iterations per cache line / clock."""
    iterations = evaluator(job.part.iterations)(n)
    return prediction.cycles_per_cl[cores - 1] * max(iterations, 0.0) \
        / prediction.iterations_per_cl / machine.clock_hz


def buffer_rows(skeleton: Skeleton, templates: dict, stages: int) -> dict[str, int]:
    """Each buffer of n doubles the skeleton's kernels use and its rows: s for a stage array, 1
    for a vector (coefficient arrays excluded)."""
    shapes: dict[str, tuple] = {}
    for directive, _ in loops_and_directives(skeleton.program):
        if directive.name != "KERNEL":
            continue
        call = kernel_call(directive)
        bound = dict(call.bindings)
        for decl in templates[call.template].datastructs:
            if decl.dims and Name("n") in decl.dims:
                shapes.setdefault(bound.get(decl.name, decl.name), decl.dims)
    return {name: stages if len(dims) == 2 else 1 for name, dims in shapes.items()}


def step_vectors(skeleton: Skeleton, templates: dict, stages: int) -> int:
    """How many vectors of n doubles the skeleton's buffers hold; 8 n times this is one time
    step's working set."""
    return sum(buffer_rows(skeleton, templates, stages).values())


def step_level(skeleton_vectors: int, machine: Machine, n: int, cores: int) -> str:
    """The level that holds one time step's data for a thread."""
    return level_for(ELEMENT_BYTES * skeleton_vectors * N, machine, n, cores)


def _deeper(machine: Machine, first: str, second: str) -> str:
    names = [level.name for level in machine.levels]
    return first if names.index(first) >= names.index(second) else second


def kernel_breakdown(form: KerncraftForm, jobs: list[LoopJob], predictions: dict,
                     machine: Machine, n: int, cores: int, step: str | None = None) -> dict:
    """Seconds of one call of the kernel and where they go, or the reason there is no number.

    A loop's data come from the level its own working set needs, or from the level that holds
    the whole time step (`step`) where that is further out: the kernels before it in the step
    have evicted what does not fit there.
    """
    parts, total = [], 0.0
    for part, job in zip(form.parts, jobs):
        level = level_for(part.working_set_bytes, machine, n, cores)
        if step is not None:
            level = _deeper(machine, level, step)
        region = _region(job, level, machine)
        prediction = predictions.get((job.key, region.level))
        if prediction is None or prediction.status != "ok":
            why = prediction.message if prediction else "no prediction stored"
            return {"template": form.template, "variant": form.variant, "failed": True,
                    "message": f"{why} (loop {job.key} in {region.level})"}
        if cores > len(prediction.cycles_per_cl):
            return {"template": form.template, "variant": form.variant, "failed": True,
                    "message": f"{cores} cores asked, the machine file gives "
                               f"{len(prediction.cycles_per_cl)} per NUMA domain"}
        seconds = part.calls * part_seconds(job, prediction, machine, n, cores)
        total += seconds
        parts.append({"loop": job.key, "level": region.level, "calls": part.calls,
                      "cycles_per_cl": prediction.cycles_per_cl[cores - 1], "seconds": seconds,
                      "contributions": prediction.contributions})
    return {"template": form.template, "variant": form.variant, "failed": False,
            "seconds_per_call": total, "parts": parts, "omitted": list(form.omitted)}


def step_counts(skeleton: Skeleton, method) -> dict:
    """Calls per step of each template the skeleton runs."""
    m, s = method.corrector_steps, method.stages
    return {template: calls_per_step(skeleton, template, m, s) for template in skeleton.templates}


def predict_variant(variant: Variant, calls_by_template: dict, breakdowns: dict, method_name: str,
                    ivp_name: str, n: int, threads: int, communication: StepCommunication,
                    ranks: int = 1) -> VariantPrediction:
    """Sum the kernels' shares and the step's communication; calls_by_template
    is step_counts of the variant's skeleton, breakdowns maps (template, kernel variant) to
    kernel_breakdown (on one rank's block where ranks > 1)."""
    kernels, total = [], 0.0
    for template, name in variant.kernels:
        share = breakdowns[(template, name)]
        calls = calls_by_template[template]
        if share["failed"]:
            return VariantPrediction(variant.id, variant.skeleton, method_name, ivp_name, n,
                                     threads, "failed",
                                     message=f"{template}/{name}: {share['message']}",
                                     ranks=ranks)
        seconds = calls * share["seconds_per_call"]
        total += seconds
        kernels.append({"template": template, "variant": name, "calls_per_step": calls,
                        "seconds": seconds, "parts": share["parts"]})
    return VariantPrediction(variant.id, variant.skeleton, method_name, ivp_name, n, threads, "ok",
                             total + communication.seconds, communication.seconds,
                             communication.barriers, tuple(kernels), ranks=ranks,
                             comm_bytes=communication.bytes)


def ranked(predictions: list[VariantPrediction]) -> list[VariantPrediction]:
    """Predicted-fastest first, ranks from 1; failed predictions after them with rank 0."""
    ok = sorted((p for p in predictions if p.status == "ok"), key=lambda p: (p.predicted_s, p.id))
    failed = [p for p in predictions if p.status != "ok"]
    return [replace(p, rank=i) for i, p in enumerate(ok, start=1)] + failed


def as_json(prediction: VariantPrediction) -> dict:
    """A JSON-able dict; a prediction that failed has predicted_s None."""
    data = {k: v for k, v in prediction.__dict__.items() if k != "kernels"}
    data["kernels"] = [dict(kernel) for kernel in prediction.kernels]
    if not math.isfinite(data["predicted_s"]):
        data["predicted_s"] = None
    return data

