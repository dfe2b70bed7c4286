"""Benchmark of the offline model: cold, warm and new-IVP prediction time, the Offsite way, and accuracy.

Every timing runs `hybridtune predict` in a new process; cold means an empty store and an empty
kerncraft cache. The Offsite way (one kerncraft CLI process per loop and size, nothing reused) is timed
on a sample of loops and extrapolated to the loops x sizes the same predictions need. Accuracy compares
predictions with measurements of a sample of the pool (every k-th variant of each ranking).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
SIZES = {"from": 1000, "to": 10000000, "points": 9}


def scenario_text(ivps: list[str], machine: str) -> str:
    return (f"name: bench_offline\nmethods: [radauIIA7]\nivps: [{', '.join(ivps)}]\n"
            f"skeletons: [A, B, C, D, E, F, G, H]\nmachine: {machine}\n"
            f"n: {{from: {SIZES['from']}, to: {SIZES['to']}, points: {SIZES['points']}}}\n"
            "threads: [1, 2]\nstrategy: {name: preselect, deviation_percent: 5}\n")


def timed_predict(scenario: Path, db: Path, cache: Path) -> dict:
    env = {**os.environ, "HYBRIDTUNE_CACHE": str(cache)}
    start = time.perf_counter()
    out = subprocess.run([str(BIN / "hybridtune"), "predict", str(scenario), "--db", str(db),
                          "--head", "1"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"predict failed ({out.returncode}): {out.stderr[-2000:]}")
    analyses = int(re.search(r"(\d+) kerncraft analyses this run", out.stdout).group(1))
    loops = int(re.search(r"(\d+) distinct loops", out.stdout).group(1))
    ranked = [int(x) for x in re.findall(r": (\d+) ranked", out.stdout)]
    failed = [int(x) for x in re.findall(r"ranked, (\d+) failed", out.stdout)]
    return {"wall_s": round(wall, 2), "kerncraft_analyses": analyses, "loops": loops,
            "configurations": len(ranked), "ranked": sum(ranked), "not_ranked": sum(failed)}


def offsite_way(db: Path, machine: Path, ivps: dict, sample: int, loops: int) -> dict:
    """One kerncraft process per loop and n, fresh folders: timed on `sample` loops x 2 sizes and
    extrapolated to the `loops` of the four-IVP pool x the sizes of n."""
    from hybridtune.store import Store
    with Store.open(db, "r") as store:
        kernels = store.frame("kernels")
    picked = kernels.iloc[:: max(1, len(kernels) // sample)][:sample]
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, row in enumerate(picked.to_dict("records")):
            code = Path(tmp) / f"k{number}" / "kernel.c"
            code.parent.mkdir()
            code.write_text(row["code"])
            ivp = ivps.get(row["ivp"])
            for n in (6000, 600000):
                if ivp is not None:
                    n = ivp.sizes.next_valid(n)
                    env = ivp.environment(n)
                    defines = {name: env[name[4:]] for name in re.findall(r"\bivp_\w+", row["code"])}
                else:
                    defines = {}
                args = [str(BIN / "kerncraft"), "-m", str(machine), "-p", "ECM", "-P", "LC",
                        "-i", "OSACA", "--pointer-increment", "auto", str(code), "-D", "n", str(n)]
                for name, value in sorted(defines.items()):
                    args += ["-D", name, str(value)]
                start = time.perf_counter()
                subprocess.run(args, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
    per_call = statistics.median(times)
    calls = loops * SIZES["points"]
    return {"sampled_calls": len(times), "median_call_s": round(per_call, 3),
            "calls_needed": calls, "extrapolated_s": round(per_call * calls, 1),
            "note": ("one kerncraft CLI process per loop and n (no region reuse, no in-process "
                     f"reuse): {loops} loops x {SIZES['points']} sizes of n; ECM gives "
                     "every core count in one call; sample median x calls")}


def accuracy(scenario_path: Path, db: Path, per_ivp: int, sizes: tuple, budget: float) -> dict:
    """Predicted against measured seconds per step for every k-th variant of each ranking (1 thread)."""
    from scipy.stats import kendalltau

    from hybridtune.describe.loader import load
    from hybridtune.measure.runner import MeasureOptions
    from hybridtune.pipeline.offline_stages import predict_scenario
    from hybridtune.describe.configuration import Configuration
    from hybridtune.generate.pool import pool_for
    from hybridtune.measure.tasks import measure_configuration
    from hybridtune.store import Store
    scenario = load(scenario_path, "scenario")
    options = MeasureOptions(budget_s=budget, ci_target=0.05)
    out = []
    with Store.open(db, "a", run={"command": "bench_offline accuracy"}) as store:
        for ivp in scenario.ivps:
            for target in sizes:
                n = ivp.sizes.next_valid(target)
                result = predict_scenario(scenario, n, [1], store)
                [ranking] = [r for r in result.rankings if r.configuration.ivp is ivp]
                ok = [p for p in ranking.predictions if p.status == "ok"]
                step = max(1, len(ok) // per_ivp)
                sample = ok[::step][:per_ivp]
                pool = pool_for(scenario, scenario.methods[0])
                config = Configuration(scenario.methods[0], ivp, n, 1)
                measured = measure_configuration(
                    scenario, config, [pool[p.id] for p in sample], options,
                    on_result=lambda r: store.append_many("measurements", [r.as_row()]))
                pairs = [(p.predicted_s, m.median_s) for p, m in zip(sample, measured)
                         if m.status == "ok"]
                rows = [[p.id, p.predicted_s, m.median_s if m.status == "ok" else None]
                        for p, m in zip(sample, measured)]
                ratios = [abs(pred / meas - 1) for pred, meas in pairs]
                tau = kendalltau([a for a, _ in pairs], [b for _, b in pairs]).statistic
                best_measured = min(pairs, key=lambda x: x[1])
                out.append({"ivp": ivp.name, "n": n, "threads": 1, "variants": len(sample),
                            "measured_ok": len(pairs),
                            "median_abs_rel_error": round(statistics.median(ratios), 3),
                            "median_predicted_over_measured": round(
                                statistics.median(a / b for a, b in pairs), 3),
                            "kendall_tau": round(float(tau), 3),
                            "rank_of_fastest_measured_in_prediction": 1 + sorted(
                                a for a, _ in pairs).index(best_measured[0]),
                            "variants_predicted_measured_s": rows})
                print(json.dumps({k: v for k, v in out[-1].items()
                                  if k != "variants_predicted_measured_s"}), flush=True)
    return {"per_configuration": out,
            "median_abs_rel_error": round(statistics.median(r["median_abs_rel_error"] for r in out), 3),
            "median_kendall_tau": round(statistics.median(r["kendall_tau"] for r in out), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", default="host", help="machine reference (default: host)")
    parser.add_argument("--offsite-sample", type=int, default=8, help="loops timed the Offsite way")
    parser.add_argument("--accuracy-variants", type=int, default=40, help="measured per IVP and n")
    parser.add_argument("--accuracy-budget", type=float, default=0.3)
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--shared-machine", default=str(ROOT.parent / "shared" / "machines" /
                                                        "SkylakeSP_Gold-6148.yml"),
                        help="a second machine file timed cold ('' to skip)")
    parser.add_argument("--output", default=str(ROOT / "data" / "bench" / "offline.json"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from hybridtune.describe.loader import load
    from hybridtune.predict.kerncraft_adapter import versions
    four = ["Cusp", "InverterChain", "Medakzo", "Wave1D"]
    work = Path(tempfile.mkdtemp(prefix="bench_offline."))
    try:
        scenario4, scenario5 = work / "four.scenario.yaml", work / "five.scenario.yaml"
        scenario4.write_text(scenario_text(four, args.machine))
        scenario5.write_text(scenario_text(four + ["Heat2D"], args.machine))
        loaded = load(scenario4, "scenario")
        db, cache = work / "store.h5", work / "cache"
        report = {"machine": loaded.machine.name, "machine_file": loaded.machine.path,
                  "machine_note": loaded.machine_note, "cores": os.cpu_count(),
                  "versions": versions(), "sizes": SIZES, "threads": [1, 2],
                  "pool": "radauIIA7, skeletons A-H (384 variants)"}
        report["cold"] = timed_predict(scenario4, db, cache)
        print("cold", report["cold"], flush=True)
        report["warm"] = timed_predict(scenario4, db, cache)
        print("warm", report["warm"], flush=True)
        report["fifth_ivp"] = {**timed_predict(scenario5, db, cache), "ivp": "Heat2D"}
        print("fifth IVP", report["fifth_ivp"], flush=True)
        if args.shared_machine:
            shared = work / "shared.scenario.yaml"
            shared.write_text(scenario_text(four, args.shared_machine))
            report["cold_shared_machine"] = {
                **timed_predict(shared, work / "shared.h5", work / "shared-cache"),
                "machine_file": args.shared_machine}
            print("cold, shared machine file", report["cold_shared_machine"], flush=True)
        ivps = {i.name: i for i in load(scenario5, "scenario").ivps}
        report["offsite_way"] = offsite_way(db, Path(loaded.machine.path), ivps,
                                            args.offsite_sample, report["cold"]["loops"])
        print("offsite way", report["offsite_way"], flush=True)
        report["targets"] = {"cold_s": 120, "warm_s": 5, "fifth_ivp_s": 30}
        report["speedup_vs_offsite_way"] = round(report["offsite_way"]["extrapolated_s"]
                                                 / report["cold"]["wall_s"], 1)
        if not args.skip_accuracy:
            default = load(ROOT / "scenarios" / "default.yaml", "scenario")
            report["accuracy"] = accuracy(scenario4, db, args.accuracy_variants,
                                          tuple(default.sizes.values), args.accuracy_budget)
        target = Path(args.output)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(report, indent=1) + "\n")
        tmp.replace(target)
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
