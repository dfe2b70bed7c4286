"""The plan of a job: layouts of 1, 2, 4, ... nodes predicted, each one's fastest variant, a choice.

Each layout is predicted with the scenario's machine file for a node and a platform's (or this
machine's) exchanges; the choice comes with its interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hybridtune.errors import RequestError
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.predict.plan import (COVERAGE, Z95, Interval, PlanOption, choose, interval,
                                     layouts, relative_sigma, with_efficiency)


@dataclass(frozen=True)
class JobPlan:
    method: str
    ivp: str
    n: int
    options: tuple                  # PlanOption per layout with a ranked variant
    choice: PlanOption
    interval: Interval
    note: str


def compute_spread(store, machine_sha256: str) -> tuple[float, str]:
    """The offline model's relative spread on this store's measurements (predict.plan
    relative_sigma of measured / predicted over measured variants), and where it came from."""
    from hybridtune.learn.table import joined_rows
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


def plan_job(scenario, nodes_max: int, store, platform_path: str | None = None,
             n: int | None = None, efficiency: float | None = None,
             workers: int | None = None) -> list[JobPlan]:
    """One plan per method, IVP and size of the scenario."""
    machine = scenario.machine
    domains = max(1, machine.cores // machine.cores_per_numa_domain)
    candidates = layouts(nodes_max, domains, machine.cores_per_numa_domain)
    # a platform needs a host per node; ranks of one node are priced as its network's too
    models, note = communication(scenario, [nodes_max if platform_path else max(2, nodes_max)],
                                 store, platform_path, threads=max(c.threads for c in candidates))
    spread, spread_note = compute_spread(store, machine.sha256)
    comm_rel = comm_spread(models)
    comm_note = ("communication as the platform's stated links give it (no fit error)"
                 if platform_path else
                 f"communication within {comm_rel:.0%} (its fits' largest held-out error); "
                 "without --platform the exchanges between nodes are priced by this machine's "
                 "own (shared-memory) fits: give --platform FILE for a cluster's network")
    plans = []
    for ivp in scenario.ivps:
        one = replace(scenario, ivps=(ivp,))
        for size in [n] if n is not None else list(scenario.sizes.for_ivp(ivp)):
            found: dict = {}
            for layout in candidates:
                for ranking in predict_scenario(one, size, [layout.threads], store, workers,
                                                ranks=[layout.ranks],
                                                communication=(models, note),
                                                keep_rankings=False,
                                                ranks_per_domain=layout.ranks_per_domain).rankings:
                    best = next((p for p in ranking.predictions if p.status == "ok"), None)
                    if best is not None:
                        found.setdefault(ranking.configuration.method.name, []).append(
                            PlanOption(layout, best.id, best.predicted_s, best.t_com_s))
            for method, options in found.items():
                options = with_efficiency(options)
                chosen = choose(options, efficiency)
                plans.append(JobPlan(method, ivp.name, size, tuple(options), chosen,
                                  interval(chosen, spread, comm_rel),
                                  f"{note}; {spread_note}; {comm_note}"))
    return plans
