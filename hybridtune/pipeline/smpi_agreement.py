"""How close the analytic step comes to SMPI's simulated one, platform by platform.

The communication each predicts (the simulated step minus the injected compute, against the
analytic exchanges), the step's error, and whether the variant predicted fastest at a rank count is
the one SMPI finds fastest (or how much slower it runs there).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.pipeline.simulated_scaling import SimulationRequest, simulate_scaling

TIE = 0.001          # variants this close to SMPI's fastest count as tied with it
WITHIN = 0.20        # the error the analytic communication is held to


def median(values) -> float | None:
    """The median of the finite values (None where there is none)."""
    values = [v for v in values if v is not None and np.isfinite(v)]
    return statistics.median(values) if values else None


def comm_errors(points) -> list[float]:
    """|predicted / simulated communication - 1| of the ok points above one rank."""
    return [abs(p.predicted_comm_s / p.simulated_comm_s - 1) for p in points
            if p.status == "ok" and p.ranks > 1 and p.simulated_comm_s > 0]


def best_picks(points) -> list[dict]:
    """At each (IVP, n, ranks): the variant predicted fastest beside SMPI's fastest, how many
    others tie with SMPI's, and how much slower the predicted pick runs in SMPI."""
    ok = [p for p in points if p.status == "ok"]
    picks = []
    for key in sorted({(p.ivp, p.n, p.ranks) for p in ok}):
        here = [p for p in ok if (p.ivp, p.n, p.ranks) == key]
        by_model = min(here, key=lambda p: (p.predicted_s, p.variant))
        by_smpi = min(here, key=lambda p: (p.simulated_s, p.variant))
        ties = sum(p.simulated_s <= by_smpi.simulated_s * (1 + TIE) for p in here) - 1
        picks.append({"ivp": key[0], "n": key[1], "ranks": key[2], "candidates": len(here),
                      "within_0.1%_of_smpi_best": ties, "analytic": by_model.variant,
                      "smpi": by_smpi.variant, "same": by_model.variant == by_smpi.variant,
                      "analytic_pick_slower_by": abs(by_model.simulated_s / by_smpi.simulated_s
                                                     - 1)})
    return picks


def agreement(points) -> dict:
    """The summary of one platform's simulated points (the keys of a scaling document's part)."""
    errors = comm_errors(points)
    steps = [abs(p.error) for p in points if p.error is not None]
    picks = best_picks(points)
    slower = [p["analytic_pick_slower_by"] for p in picks]
    return {
        "failed": sum(p.status != "ok" for p in points),
        "comm_error_median": median(errors), "comm_error_max": max(errors, default=None),
        "comm_within_20": sum(e <= WITHIN for e in errors), "comm_compared": len(errors),
        "step_error_median": median(steps), "step_error_max": max(steps, default=None),
        "step_within_20": sum(e <= WITHIN for e in steps), "step_compared": len(steps),
        "same_best": sum(p["same"] for p in picks), "best_compared": len(picks),
        "analytic_pick_slower_max": max(slower, default=None),
        "analytic_pick_within_1pct": sum(s <= 0.01 for s in slower), "picks": picks}


def platform_part(platform_path: str, note: str, points, wall_s: float) -> dict:
    """One platform's part of a scaling document: its points and their agreement."""
    return {"platform": str(platform_path), "note": note, "wall_s": wall_s,
            "points": [p.as_json() for p in points], **agreement(points)}


def simulated_platforms(scenario, store, platforms: list[str], request: SimulationRequest,
                        on_point=None) -> dict:
    """The request simulated on each platform file: {platform name: part}."""
    parts = {}
    for path in platforms:
        started = time.monotonic()
        points, note = simulate_scaling(scenario, replace(request, platform_path=path), store,
                                        on_point)
        parts[Path(path).stem] = platform_part(path, note, points, time.monotonic() - started)
    return parts


def largest_simulation(scenario, store, platform_path: str, ivp_name: str, n: int,
                       ranks: int, timeout_s: float = 900.0) -> dict:
    """One IVP at n on `ranks` simulated ranks, 10 steps: the variant predicted fastest and the
    fastest that gathers (an allgather of every block, the costliest to simulate), with the wall
    time and peak memory each took."""
    one = replace(scenario, ivps=tuple(i for i in scenario.ivps if i.name == ivp_name))
    models = communication(one, [ranks], store, platform_path)
    ranking, = predict_scenario(one, n, [1], store, ranks=[ranks], communication=models,
                                keep_rankings=False).rankings
    ok = [p for p in ranking.predictions if p.status == "ok"]
    chosen = (ok[0].id, next(p.id for p in ok if "-nx" not in p.skeleton))
    request = SimulationRequest(platform_path, ranks, n=n, variants=chosen, steps=10,
                                timeout_s=timeout_s, only=(ranks,))
    points, note = simulate_scaling(one, request, store)
    return {"note": note, "points": [p.as_json() for p in points]}
