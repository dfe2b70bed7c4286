"""The plan of a job: layouts of 1, 2, 4, ... nodes predicted, the fastest variant in each, the choice.

Each layout is predicted with the scenario's machine file for a node and a platform's (or this
machine's) exchanges. The choice is the fastest layout at the requested parallel efficiency, the
absolute fastest named beside it, both with their intervals; SMPI can run both on the platform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hybridtune.errors import RequestError
from hybridtune.learn.table import joined_rows
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.predict.plan import (COVERAGE, DEFAULT_EFFICIENCY, Z95, Interval, PlanOption,
                                     choose, interval, layouts, relative_sigma, with_efficiency)


@dataclass(frozen=True)
class PlanRequest:
    """What a plan is asked: up to nodes_max nodes, the choice at least `efficiency` parallel
    efficiency (None: the fastest), exchanges priced by a platform file (None: this machine's)."""
    nodes_max: int
    platform_path: str | None = None
    n: int | None = None
    efficiency: float | None = DEFAULT_EFFICIENCY
    workers: int | None = None


@dataclass(frozen=True)
class JobPlan:
    method: str
    ivp: str
    n: int
    options: tuple                  # PlanOption per layout with a ranked variant
    choice: PlanOption              # the fastest reaching the efficiency asked
    interval: Interval
    note: str
    fastest: PlanOption | None = None           # the fastest of all options
    fastest_interval: Interval | None = None


@dataclass(frozen=True)
class _Pricing:
    """What every plan of one call shares: the layouts, the exchanges and both spreads."""
    candidates: tuple
    communication: tuple            # (CommunicationModels, note)
    compute_rel: float
    comm_rel: float
    note: str
    on_platform: bool = False


def compute_spread(store, machine_sha256: str) -> tuple[float, str]:
    """The offline model's relative spread on this store's measurements (predict.plan
    relative_sigma of measured / predicted over measured variants), and where it came from."""
    if store is None:
        return 0.0, "no store: the computation's spread is unknown (0 used)"
    try:
        rows = joined_rows(store.frame("variant_predictions"), store.frame("measurements"),
                           machine_sha256, runs=store.frame("runs")).frame
    except RequestError:        # no (usable) predictions of this machine file: nothing to judge
        rows = None
    if rows is not None:
        rows = rows[np.isfinite(rows["median_s"].astype(float)) & (rows["predicted_s"] > 0)]
    if rows is None or rows.empty:
        return 0.0, ("no measurement of this machine file's predictions in the store: the "
                     "computation's spread is unknown (0 used)")
    spread = relative_sigma(rows["median_s"].astype(float) / rows["predicted_s"])
    return spread, (f"computation within {Z95 * spread:.0%} at {COVERAGE:.0%} (the offline "
                    f"model's errors on {len(rows)} measured variants in the store)")


def comm_spread(models) -> float:
    """The largest held-out error of the exchange fits (0 for a platform's stated links)."""
    errors = [m.fit.held_out_error for m in models.exchanges.values()
              if math.isfinite(m.fit.held_out_error)]
    return max(errors, default=0.0)


def _pricing(scenario, request: PlanRequest, store) -> _Pricing:
    machine = scenario.machine
    domains = max(1, machine.cores // machine.cores_per_numa_domain)
    candidates = tuple(layouts(request.nodes_max, domains, machine.cores_per_numa_domain))
    # a platform needs a host per node; ranks of one node are priced as its network's too
    platform = request.platform_path
    models, note = communication(scenario, [request.nodes_max if platform else
                                            max(2, request.nodes_max)],
                                 store, platform, threads=max(c.threads for c in candidates))
    spread, spread_note = compute_spread(store, machine.sha256)
    comm_rel = comm_spread(models)
    comm_note = ("communication as the platform's stated links give it (no fit error)"
                 if platform else
                 f"communication within {comm_rel:.0%} (its fits' largest held-out error); "
                 "without --platform the exchanges between nodes are priced by this machine's "
                 "own (shared-memory) fits: give --platform FILE for a cluster's network")
    return _Pricing(candidates, (models, note), spread, comm_rel,
                    f"{note}; {spread_note}; {comm_note}", platform is not None)


def _exchanges(pricing: _Pricing, threads: int) -> tuple:
    """The communication models of ranks of `threads` threads: on a platform, a rank of one
    thread meets no barrier of its threads, as `predict --scaling` and SMPI have it."""
    models, note = pricing.communication
    if threads > 1 or not pricing.on_platform:
        return models, note
    return replace(models, omp_barrier=None), note


def layout_options(scenario, size: int, pricing: _Pricing, store, workers=None) -> dict:
    """method name -> [PlanOption]: the fastest ok variant of each layout, at one size."""
    found: dict = {}
    for layout in pricing.candidates:
        rankings = predict_scenario(scenario, size, [layout.threads], store, workers,
                                    ranks=[layout.ranks],
                                    communication=_exchanges(pricing, layout.threads),
                                    keep_rankings=False,
                                    ranks_per_domain=layout.ranks_per_domain).rankings
        for ranking in rankings:
            best = next((p for p in ranking.predictions if p.status == "ok"), None)
            if best is not None:
                found.setdefault(ranking.configuration.method.name, []).append(
                    PlanOption(layout, best.id, best.predicted_s, best.t_com_s,
                               configuration=ranking.configuration, prediction=best))
    return found


def _job_plan(method: str, ivp: str, size: int, options: list, pricing: _Pricing,
              efficiency: float | None) -> JobPlan:
    options = with_efficiency(options)
    chosen, fastest = choose(options, efficiency), choose(options)
    return JobPlan(method, ivp, size, tuple(options), chosen,
                   interval(chosen, pricing.compute_rel, pricing.comm_rel), pricing.note,
                   fastest, interval(fastest, pricing.compute_rel, pricing.comm_rel))


def plan_job(scenario, request: PlanRequest, store) -> list[JobPlan]:
    """One plan per method, IVP and size of the scenario."""
    pricing = _pricing(scenario, request, store)
    plans = []
    for ivp in scenario.ivps:
        one = replace(scenario, ivps=(ivp,))
        for size in [request.n] if request.n is not None else list(scenario.sizes.for_ivp(ivp)):
            found = layout_options(one, size, pricing, store, request.workers)
            plans += [_job_plan(method, ivp.name, size, options, pricing, request.efficiency)
                      for method, options in found.items()]
    return plans
