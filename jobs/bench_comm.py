"""Benchmark of communication between two MPI ranks on this node: the fitted models judged at sizes they never saw, and the MPI variants' predicted communication, rank counts and layouts judged against their measured times.

Part 1, messages (--runs times each, sizes in an order drawn anew per run): ping-pong with Hockney's
model and LogGP's round trips; allgather and neighbour exchange with Hockney's model at two ranks;
the barrier. Part 2, variants: scenarios/mpi.yaml predicted for 1 rank x 1 thread, 2 ranks x 1
thread and 1 rank x 2 threads, and a pool measured in each layout, one layout after the other per
variant, so that drift falls on the three alike: per skeleton form the variants that use every
kernel variant (--pool sample, the default) or every variant (--pool all, about an hour per IVP).
Part 3, corrections: the gp correction model, each IVP left out in turn, trained on the other IVPs'
measurements of every layout and of one rank alone (--corrections-only: this part alone, on the
last run's store). Writes data/bench/comm.json and the variants' store
data/bench/comm-variants.h5.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time

import numpy as np
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hybridtune.describe.configuration import Configuration, runnable   # noqa: E402
from hybridtune.describe.library import host_machine_file              # noqa: E402
from hybridtune.describe.loader import load                             # noqa: E402
from hybridtune.describe.strategy import parse_strategy                 # noqa: E402
from hybridtune.pipeline.offline_stages import predict_scenario                    # noqa: E402
from hybridtune.generate.pool import covering_sample, pool_for          # noqa: E402
from hybridtune.measure.comm_bench import comm_run, pingpong            # noqa: E402
from hybridtune.measure.provenance import hardware_identity             # noqa: E402
from hybridtune.measure.runner import MeasureOptions, measure           # noqa: E402
from hybridtune.measure.tasks import plan_tasks, prebuild               # noqa: E402
from hybridtune.predict.collectives import fit_exchange, protocol_switch  # noqa: E402
from hybridtune.predict.hockney import fit_hockney                      # noqa: E402
from hybridtune.predict.loggp import fit_loggp                          # noqa: E402
from hybridtune.learn.table import Rows, joined_rows                    # noqa: E402
from hybridtune.learn.train import fit                                  # noqa: E402
from hybridtune.store import Store                                      # noqa: E402
from hybridtune.predict.variants import ranked                          # noqa: E402
from hybridtune.strategies.registry import shortlist                    # noqa: E402

PINGPONG_SIZES = [0] + [2 ** k for k in range(3, 23)]
EXCHANGE_SIZES = [2 ** k for k in range(3, 23)]
PRTT_SIZES = [1, 64, 1024, 16384, 262144]
LAYOUTS = ((1, 1), (2, 1), (1, 2))          # (ranks, threads per rank)
RATIO_TARGET, PRESELECT_TARGET, PICK_TARGET, DIFFER = 0.25, 0.05, 0.80, 0.05
STORE = ROOT / "data" / "bench" / "comm-variants.h5"   # the variants' predictions and measurements


def _shuffled(sizes: list, generator: random.Random) -> list:
    order = sizes[:]
    generator.shuffle(order)
    return order


def _fit_json(fit) -> dict:
    return {"pieces": [{**asdict(p), "n_half": p.n_half} for p in fit.pieces],
            "fit_error": fit.fit_error, "held_out_error": fit.held_out_error,
            "held_out_bytes": list(fit.held_out_bytes), "note": fit.note}


def messages(runs: int, reps: int, generator: random.Random) -> dict:
    out = {"pingpong": [], "loggp": [], "allgather": [], "neighbour": [], "barrier": []}
    for number in range(runs):
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
            out[kind].append({"points": [asdict(p) for p in run.points],
                              "fit": _fit_json(model.fit)})
        barrier = comm_run("barrier", [0], reps=reps)
        out["barrier"].append(asdict(barrier.points[0]))
        print(f"messages run {number + 1}: ping-pong {fit.note}; {loggp.note}; allgather "
              f"held out {out['allgather'][-1]['fit']['held_out_error']:.1%}; neighbour held out "
              f"{out['neighbour'][-1]['fit']['held_out_error']:.1%}", flush=True)
    summary = {kind: {"held_out_error_median": statistics.median(
        r["fit"]["held_out_error"] for r in out[kind]), "held_out_error_max": max(
        r["fit"]["held_out_error"] for r in out[kind])}
        for kind in ("pingpong", "allgather", "neighbour")}
    return {"runs": out, "summary": summary}


def _predictions(scenario, store_path: Path) -> dict:
    """(ivp, n, ranks, threads) -> {variant id: its ranked prediction}."""
    predicted = {}
    with Store.open(store_path, "a", run={"command": "bench_comm"}) as store:
        for ranks, threads in LAYOUTS:
            result = predict_scenario(scenario, None, [threads], store, ranks=[ranks])
            for ranking in result.rankings:
                c = ranking.configuration
                predicted[(c.ivp.name, c.n, c.ranks, c.threads)] = {
                    p.id: p for p in ranking.predictions if p.status == "ok"}
    return predicted


def variants(scenario, whole_pool: bool, options: MeasureOptions, store_path: Path) -> dict:
    method = scenario.methods[0]
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = list(pool_for(scenario, method).values())
    chosen = pool if whole_pool else covering_sample(pool)
    predicted = _predictions(scenario, store_path)
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
            for index, variant in enumerate(runs):
                row = {"ivp": ivp.name, "n": n, "id": variant.id, "skeleton": variant.skeleton}
                for ranks, threads in LAYOUTS:
                    result = measure(tasks[(ranks, threads)][index], options)
                    store.append_many("measurements", [result.as_row()])
                    key = f"{ranks}x{threads}"
                    row[f"measured_{key}"] = result.median_s if result.status == "ok" else None
                    row[f"status_{key}"] = result.status
                    row[f"ci_rel_{key}"] = result.ci_rel
                    guess = predicted[(ivp.name, n, ranks, threads)].get(variant.id)
                    row[f"predicted_{key}"] = guess.predicted_s if guess else None
                rows.append(row)
            print(f"{ivp.name} n={n}: {len(runs)} variants in {len(LAYOUTS)} layouts"
                  + (f" ({'; '.join(notes)})" if notes else ""), flush=True)
    return {"pool": "all" if whole_pool else "covering sample", "rows": rows,
            "judged": judge(rows, predicted)}


def corrections(store_path: Path) -> dict:
    """The correction model (gp) on the measured variants, each IVP left out in turn: trained on
    the other IVPs' rows of every layout, and on their one-rank rows alone; per layout the median
    relative error of the offline prediction and of each corrected one on the left-out IVP."""
    with Store.open(store_path, "r") as store:
        rows = joined_rows(store.frame("variant_predictions"), store.frame("measurements"))
    measured = rows.measured
    out: dict = {}
    for ivp in sorted(set(measured["ivp"])):
        test = measured[measured["ivp"] == ivp]
        variants_, features = test["variant"].tolist(), test["features"].tolist()
        times = test["median_s"].to_numpy(float)
        predicted = test["predicted_s"].to_numpy(float)
        found = {"offline": predicted}
        others = rows.frame[rows.frame["ivp"] != ivp]
        for name, train in (("all_layouts", others),
                            ("one_rank_only", others[others["ranks"] == 1])):
            model = fit(Rows(train, rows.feature_schema, rows.machine_sha256), "gp", left_out=ivp)
            found[name] = predicted * np.exp(model.correction(variants_, features)[0])
        for (ranks, threads), index in test.groupby(["ranks", "threads"]).indices.items():
            out.setdefault(f"{ranks}x{threads}", {})[ivp] = {
                name: float(np.median(np.abs(values[index] / times[index] - 1)))
                for name, values in found.items()}
        print(f"corrections, {ivp} left out: " + "; ".join(
            f"{layout} " + ", ".join(f"{k} {v:.1%}" for k, v in errors[ivp].items())
            for layout, errors in out.items() if ivp in errors), flush=True)
    return {"model": "gp, each IVP left out in turn", "median_rel_error": out}


def _ok(row, *keys) -> bool:
    return all(row.get(f"measured_{k}") and row.get(f"predicted_{k}") for k in keys)


def judge(rows: list, predicted: dict) -> dict:
    """The targets: ratio of 2 ranks to 1 within 25%, preselect:5 within 5% per rank count, the
    faster of 2x1 and 1x2 picked in 80% where they differ by more than 5%."""
    ratio_errors = [(r["predicted_2x1"] / r["predicted_1x1"]) / (r["measured_2x1"] / r["measured_1x1"])
                    - 1 for r in rows if _ok(r, "1x1", "2x1")]
    strategy = parse_strategy("preselect:5")
    preselect = []
    for ivp, n in sorted({(r["ivp"], r["n"]) for r in rows}):
        mine = [r for r in rows if r["ivp"] == ivp]
        for ranks, key in ((1, "1x1"), (2, "2x1")):
            measured = {r["id"]: r[f"measured_{key}"] for r in mine if _ok(r, key)}
            if not measured:
                continue
            guesses = predicted[(ivp, n, ranks, 1)]
            picked = [g.id for g in shortlist(strategy, ranked(
                [guesses[v] for v in measured]))]
            best = min(measured.values())
            chosen = min(measured[v] for v in picked)
            preselect.append({"ivp": ivp, "layout": key, "picked": len(picked),
                              "loss": chosen / best - 1})
    picks = []
    for r in rows:
        if not _ok(r, "2x1", "1x2"):
            continue
        measured = r["measured_2x1"] / r["measured_1x2"]
        if abs(measured - 1) > DIFFER:
            picks.append((measured < 1) == (r["predicted_2x1"] < r["predicted_1x2"]))
    within = [abs(e) <= RATIO_TARGET for e in ratio_errors]
    return {
        "ratio": {"variants": len(ratio_errors), "within_25%": sum(within),
                  "median_abs_error": statistics.median(abs(e) for e in ratio_errors)
                  if ratio_errors else None, "target": f"|predicted/measured - 1| <= {RATIO_TARGET}"},
        "preselect5": {"configurations": preselect,
                       "within_5%": sum(p["loss"] <= PRESELECT_TARGET for p in preselect)},
        "layouts": {"differing": len(picks), "picked_faster": sum(picks),
                    "share": sum(picks) / len(picks) if picks else None}}


def _write(report: dict, clock: float) -> Path:
    report["wall_s"] = time.monotonic() - clock
    out = ROOT / "data" / "bench" / "comm.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--pool", choices=("sample", "all"), default="sample")
    parser.add_argument("--skip-variants", action="store_true")
    parser.add_argument("--ivps", help="comma-separated IVPs of scenarios/mpi.yaml (default: all)")
    parser.add_argument("--corrections-only", action="store_true",
                        help="judge the correction models again on the variants' store of the "
                        "last run (data/bench/comm-variants.h5), measuring nothing")
    args = parser.parse_args()
    if args.corrections_only:
        out = ROOT / "data" / "bench" / "comm.json"
        report = json.loads(out.read_text())
        report["corrections"] = corrections(STORE)
        report["corrections"]["command"] = "jobs/bench_comm.sh --corrections-only"
        out.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {out}")
        return
    generator = random.Random(1)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    clock = time.monotonic()
    report = {"command": "jobs/bench_comm.sh " + " ".join(sys.argv[1:]), "started": started,
              "host": platform.node(), "cpu": hardware_identity()["hardware"]["model"],
              "hardware_id": hardware_identity()["hardware_id"], "ranks": 2,
              "machine_file": host_machine_file()[1],
              "messages": messages(args.runs, args.reps, generator)}
    if not args.skip_variants:
        options = replace(MeasureOptions(), ci_target=0.03, budget_s=0.5)
        scenario = load(ROOT / "scenarios" / "mpi.yaml")
        if args.ivps:
            wanted = args.ivps.split(",")
            scenario = replace(scenario, ivps=tuple(i for i in scenario.ivps if i.name in wanted))
        STORE.unlink(missing_ok=True)
        report["variants"] = variants(scenario, args.pool == "all", options, STORE)
        report["store"] = str(STORE.relative_to(ROOT))
        _write(report, clock)       # the measurements kept should the corrections fail
        report["corrections"] = corrections(STORE)
    out = _write(report, clock)
    print(json.dumps({"summary": report["messages"]["summary"],
                      "judged": report.get("variants", {}).get("judged"),
                      "corrections": report.get("corrections")}, indent=1))
    print(f"wrote {out} in {report['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
