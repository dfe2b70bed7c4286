"""Communication on this node: message models judged at unseen sizes, MPI variants across layouts.

Messages: ping-pong with Hockney's model and LogGP's round trips, allgather and neighbour
exchange with Hockney's model at two ranks, the barrier; each run's sizes in an order drawn anew.
Variants: a scenario's pool predicted and measured in each layout of LAYOUTS, one layout after the
other per variant so that drift falls on all alike, and judged against the targets.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict
from pathlib import Path

from hybridtune.describe.configuration import Configuration, runnable
from hybridtune.describe.strategy import parse_strategy
from hybridtune.generate.pool import covering_sample, pool_for
from hybridtune.measure.comm_bench import comm_run, pingpong
from hybridtune.measure.runner import MeasureOptions, measure
from hybridtune.measure.tasks import plan_tasks, prebuild
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.predict.collectives import fit_exchange, protocol_switch
from hybridtune.predict.hockney import fit_hockney
from hybridtune.predict.loggp import fit_loggp
from hybridtune.predict.variants import ranked
from hybridtune.store import Store
from hybridtune.strategies.registry import shortlist

PINGPONG_SIZES = [0] + [2 ** k for k in range(3, 23)]
EXCHANGE_SIZES = [2 ** k for k in range(3, 23)]
PRTT_SIZES = [1, 64, 1024, 16384, 262144]
LAYOUTS = ((1, 1), (2, 1), (1, 2))          # (ranks, threads per rank)
RATIO_TARGET, PRESELECT_TARGET, DIFFER = 0.25, 0.05, 0.05


def _shuffled(sizes: list, generator: random.Random) -> list:
    order = sizes[:]
    generator.shuffle(order)
    return order


def _fit_json(fit) -> dict:
    return {"pieces": [{**asdict(p), "n_half": p.n_half} for p in fit.pieces],
            "fit_error": fit.fit_error, "held_out_error": fit.held_out_error,
            "held_out_bytes": list(fit.held_out_bytes), "note": fit.note}


def _message_run(out: dict, reps: int, generator: random.Random) -> str:
    """One run of every message benchmark and its fits, appended to out; a line on them."""
    run = pingpong(_shuffled(PINGPONG_SIZES, generator), reps=reps)
    fit = fit_hockney(sorted((p.bytes, p.median_s) for p in run.points))
    out["pingpong"].append({"library": run.library, "provenance": run.provenance,
                            "points": [asdict(p) for p in run.points], "fit": _fit_json(fit)})
    prtt = comm_run("prtt", _shuffled(PRTT_SIZES, generator), reps=reps)
    loggp = fit_loggp(prtt.points)
    out["loggp"].append({**asdict(loggp), "hockney_alpha_s": loggp.hockney[0],
                         "hockney_beta_s_per_byte": loggp.hockney[1],
                         "points": [asdict(p) for p in prtt.points]})
    for kind, op in (("allgather", "mpi_allgather"), ("neighbour", "mpi_neighbour_exchange")):
        run = comm_run(kind, _shuffled(EXCHANGE_SIZES, generator), reps=reps)
        model = fit_exchange(op, run, protocol_switch(fit))
        out[kind].append({"points": [asdict(p) for p in run.points], "fit": _fit_json(model.fit)})
    out["barrier"].append(asdict(comm_run("barrier", [0], reps=reps).points[0]))
    return (f"ping-pong {fit.note}; {loggp.note}; allgather held out "
            f"{out['allgather'][-1]['fit']['held_out_error']:.1%}; neighbour held out "
            f"{out['neighbour'][-1]['fit']['held_out_error']:.1%}")


def messages(runs: int, reps: int, generator: random.Random, log=lambda text: None) -> dict:
    """runs runs of the message benchmarks, and the fits' held-out errors over them."""
    out: dict = {"pingpong": [], "loggp": [], "allgather": [], "neighbour": [], "barrier": []}
    for number in range(runs):
        log(f"messages run {number + 1}: {_message_run(out, reps, generator)}")
    summary = {kind: {"held_out_error_median": statistics.median(
        r["fit"]["held_out_error"] for r in out[kind]), "held_out_error_max": max(
        r["fit"]["held_out_error"] for r in out[kind])}
        for kind in ("pingpong", "allgather", "neighbour")}
    return {"runs": out, "summary": summary}


def layout_predictions(scenario, store_path: Path) -> dict:
    """(ivp, n, ranks, threads) -> {variant id: its ranked prediction} for every layout."""
    predicted = {}
    with Store.open(store_path, "a", run={"command": "bench_comm"}) as store:
        for ranks, threads in LAYOUTS:
            result = predict_scenario(scenario, None, [threads], store, ranks=[ranks])
            for ranking in result.rankings:
                c = ranking.configuration
                predicted[(c.ivp.name, c.n, c.ranks, c.threads)] = {
                    p.id: p for p in ranking.predictions if p.status == "ok"}
    return predicted


def _layout_row(store, tasks: dict, index: int, variant, predicted: dict, options) -> dict:
    """One variant measured in every layout (stored), beside its predictions."""
    ivp, n = tasks[LAYOUTS[0]][index].ivp, tasks[LAYOUTS[0]][index].n
    row = {"ivp": ivp, "n": n, "id": variant.id, "skeleton": variant.skeleton}
    for ranks, threads in LAYOUTS:
        result = measure(tasks[(ranks, threads)][index], options)
        store.append_many("measurements", [result.as_row()])
        key = f"{ranks}x{threads}"
        guess = predicted[(ivp, n, ranks, threads)].get(variant.id)
        row.update({f"measured_{key}": result.median_s if result.status == "ok" else None,
                    f"status_{key}": result.status, f"ci_rel_{key}": result.ci_rel,
                    f"predicted_{key}": guess.predicted_s if guess else None})
    return row


def measure_layouts(scenario, whole_pool: bool, options: MeasureOptions, store_path: Path,
                    log=lambda text: None) -> dict:
    """The pool (whole, or a covering sample) of each IVP measured in every layout, judged."""
    method = scenario.methods[0]
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = list(pool_for(scenario, method).values())
    chosen = pool if whole_pool else covering_sample(pool)
    predicted = layout_predictions(scenario, store_path)
    rows = []
    with Store.open(store_path, "a", run={"command": "bench_comm"}) as store:
        for ivp in scenario.ivps:
            n = scenario.sizes.for_ivp(ivp)[0]
            configs = {layout: Configuration(method, ivp, n, layout[1], layout[0])
                       for layout in LAYOUTS}
            runs, notes = runnable(skeletons, configs[(2, 1)], chosen)
            tasks = {layout: plan_tasks(scenario, config, runs, options)
                     for layout, config in configs.items()}
            prebuild([t.generated for layout in LAYOUTS for t in tasks[layout]])
            rows += [_layout_row(store, tasks, index, variant, predicted, options)
                     for index, variant in enumerate(runs)]
            log(f"{ivp.name} n={n}: {len(runs)} variants in {len(LAYOUTS)} layouts"
                + (f" ({'; '.join(notes)})" if notes else ""))
    return {"pool": "all" if whole_pool else "covering sample", "rows": rows,
            "judged": judge(rows, predicted)}


def _ok(row: dict, *keys) -> bool:
    return all(row.get(f"measured_{k}") and row.get(f"predicted_{k}") for k in keys)


def _preselect_losses(rows: list, predicted: dict) -> list:
    """Per IVP and rank count: preselect:5's pick on the predictions against the fastest measured."""
    strategy = parse_strategy("preselect:5")
    found = []
    for ivp, n in sorted({(r["ivp"], r["n"]) for r in rows}):
        mine = [r for r in rows if r["ivp"] == ivp]
        for ranks, key in ((1, "1x1"), (2, "2x1")):
            measured = {r["id"]: r[f"measured_{key}"] for r in mine if _ok(r, key)}
            if not measured:
                continue
            guesses = predicted[(ivp, n, ranks, 1)]
            picked = [g.id for g in shortlist(strategy, ranked([guesses[v] for v in measured]))]
            found.append({"ivp": ivp, "layout": key, "picked": len(picked),
                          "loss": min(measured[v] for v in picked) / min(measured.values()) - 1})
    return found


def judge(rows: list, predicted: dict) -> dict:
    """The targets: ratio of 2 ranks to 1 within 25%, preselect:5 within 5% per rank count, the
    faster of 2x1 and 1x2 picked where they differ by more than 5%."""
    ratio_errors = [(r["predicted_2x1"] / r["predicted_1x1"]) / (r["measured_2x1"] / r["measured_1x1"])
                    - 1 for r in rows if _ok(r, "1x1", "2x1")]
    preselect = _preselect_losses(rows, predicted)
    picks = [(r["measured_2x1"] < r["measured_1x2"]) == (r["predicted_2x1"] < r["predicted_1x2"])
             for r in rows if _ok(r, "2x1", "1x2")
             and abs(r["measured_2x1"] / r["measured_1x2"] - 1) > DIFFER]
    return {
        "ratio": {"variants": len(ratio_errors),
                  "within_25%": sum(abs(e) <= RATIO_TARGET for e in ratio_errors),
                  "median_abs_error": statistics.median(abs(e) for e in ratio_errors)
                  if ratio_errors else None, "target": f"|predicted/measured - 1| <= {RATIO_TARGET}"},
        "preselect5": {"configurations": preselect,
                       "within_5%": sum(p["loss"] <= PRESELECT_TARGET for p in preselect)},
        "layouts": {"differing": len(picks), "picked_faster": sum(picks),
                    "share": sum(picks) / len(picks) if picks else None}}
