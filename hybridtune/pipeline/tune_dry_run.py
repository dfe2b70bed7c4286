"""What a tune run would analyse, build and measure, and its cost; nothing runs or is written.

The store, where it exists, is only read."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hybridtune.pipeline.measuring_phase import task_cost
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.store_policy import read_only_store, store_path
from hybridtune.pipeline.tuning_run import TuneRequest, plan_configurations, stored_rows
from hybridtune.measure.runner import variant_built
from hybridtune.strategies.sample import sample_size

SECONDS_PER_ANALYSIS = 1.0      # --dry-run's estimates of one kerncraft analysis and one build
SECONDS_PER_BUILD = 1.5         # (docs/benchmarks.md#constants-set-from-measurements)
USUAL_SHARE = {"preselect": "{spelling} usually keeps a few percent of the pool",
               "hybrid": "hybrid usually stops after a few percent of the pool"}


@dataclass(frozen=True)
class Unpredicted:
    """A configuration whose kernels are not yet analysed: how many its strategy measures at
    most, of how many variants."""
    configuration: object
    most: int
    pool: int


@dataclass(frozen=True)
class DryRunPlan:
    """The analyses, builds and measurements a run would do, and their estimated seconds.

    Where analyses are missing, shortlists are unknown: `unpredicted` bounds each configuration's
    measurements; else `plans` are the run's plans (TuningPlan) with what the store answers."""
    store: str
    workers: int
    nodes: int
    analyses: int
    barrier_note: str
    analyses_s: float
    unpredicted: tuple = ()
    plans: tuple = ()
    builds: int = 0
    build_s: float = 0.0
    measurements: int = 0
    measure_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.analyses_s + self.build_s + self.measure_s


def _bounds(request: TuneRequest, offline) -> tuple:
    spec = request.strategy
    bound = {name: spec.k + sample_size(spec.k, spec.sample)
             for name in ("top_k", "random", "tpe")}
    return tuple(Unpredicted(ranking.configuration,
                             min(len(ranking.predictions),
                                 bound.get(spec.name, len(ranking.predictions))),
                             len(ranking.predictions)) for ranking in offline.rankings)


def _unbuilt(plans: list) -> set:
    return {task.generated.code for plan in plans for task in plan.tasks
            if not variant_built(task.generated)}


def dry_run_plan(request: TuneRequest, db: str | None, nodes: int,
                 hardware_id: str) -> DryRunPlan:
    """The run's plan from the store's predictions and measurements alone, on `nodes` nodes."""
    path = store_path(db)
    workers = len(os.sched_getaffinity(0))
    with read_only_store(path) as store:
        offline = predict_scenario(request.scenario, request.n,
                                   list(request.threads or []) or None, store, workers,
                                   dry_run=True, ranks=list(request.ranks or []) or None)
        stored = stored_rows(store) if store is not None else {}
    head = dict(store=path, workers=workers, nodes=nodes, analyses=offline.missing,
                barrier_note=offline.barrier_note,
                analyses_s=offline.missing * SECONDS_PER_ANALYSIS / workers)
    if offline.missing:
        bounds = _bounds(request, offline)
        most = sum(item.most for item in bounds)
        return DryRunPlan(**head, unpredicted=bounds, measurements=most,
                          measure_s=most * task_cost(request.options) / nodes)
    plans = plan_configurations(request, offline.rankings, stored, hardware_id)
    measurements = sum(len(plan.tasks) for plan in plans)
    builds = len(_unbuilt(plans))
    return DryRunPlan(**head, plans=tuple(plans), builds=builds,
                      build_s=builds * SECONDS_PER_BUILD / (workers * nodes),
                      measurements=measurements,
                      measure_s=measurements * task_cost(request.options) / nodes)
