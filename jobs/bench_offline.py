"""Benchmark of the offline model: cold, warm and new-IVP prediction time, the Offsite way, and accuracy.

Every timing runs `hybridtune predict` in a new process; cold means an empty store and an empty
kerncraft cache. The Offsite way and the accuracy (predictions against measurements of a sample of
the pool) are pipeline/offline_study's. Writes data/bench/offline.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.pipeline.command_timing import timed_command
from hybridtune.pipeline.offline_study import accuracy, offsite_way
from hybridtune.predict.kerncraft_adapter import versions

BIN = Path(sys.executable).parent
SIZES = {"from": 1000, "to": 10000000, "points": 9}
FOUR = ["Cusp", "InverterChain", "Medakzo", "Wave1D"]


def scenario_file(path: Path, ivps: list[str], machine: str) -> Path:
    path.write_text(f"name: bench_offline\nmethods: [radauIIA7]\nivps: [{', '.join(ivps)}]\n"
                    f"skeletons: [A, B, C, D, E, F, G, H]\nmachine: {machine}\nn: {{from: "
                    f"{SIZES['from']}, to: {SIZES['to']}, points: {SIZES['points']}}}\n"
                    "threads: [1, 2]\nstrategy: {name: preselect, deviation_percent: 5}\n")
    return path


def timed_predict(scenario: Path, db: Path, cache: Path, **extra) -> dict:
    out = timed_command([str(BIN / "hybridtune"), "predict", str(scenario), "--db", str(db),
                         "--head", "1"], {**os.environ, "HYBRIDTUNE_CACHE": str(cache)}, True)
    if out.exit != 0:
        sys.exit(f"predict failed ({out.exit}): {out.stderr[-2000:]}")
    ranked = [int(x) for x in re.findall(r": (\d+) ranked", out.stdout)]
    found = {"wall_s": round(out.wall_s, 2), "configurations": len(ranked), "ranked": sum(ranked),
             "kerncraft_analyses": int(re.search(r"(\d+) kerncraft analyses this run",
                                                 out.stdout).group(1)),
             "loops": int(re.search(r"(\d+) distinct loops", out.stdout).group(1)),
             "not_ranked": sum(int(x) for x in re.findall(r"ranked, (\d+) failed", out.stdout)),
             **extra}
    print(scenario.stem, found, flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", default="host", help="machine reference (default: host)")
    parser.add_argument("--offsite-sample", type=int, default=8, help="loops timed the Offsite way")
    parser.add_argument("--accuracy-variants", type=int, default=40, help="measured per IVP and n")
    parser.add_argument("--accuracy-budget", type=float, default=0.3)
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--shared-machine", default=str(PROJECT_ROOT.parent / "shared" / "machines"
                                                        / "SkylakeSP_Gold-6148.yml"),
                        help="a second machine file timed cold ('' to skip)")
    parser.add_argument("--output", default=str(PROJECT_ROOT / "data" / "bench" / "offline.json"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_offline."))
    try:
        four = scenario_file(work / "four.scenario.yaml", FOUR, args.machine)
        five = scenario_file(work / "five.scenario.yaml", FOUR + ["Heat2D"], args.machine)
        loaded = load(four, "scenario")
        db, cache = work / "store.h5", work / "cache"
        report = {"machine": loaded.machine.name, "machine_file": loaded.machine.path,
                  "machine_note": loaded.machine_note, "cores": os.cpu_count(),
                  "versions": versions(), "sizes": SIZES, "threads": [1, 2],
                  "pool": "radauIIA7, skeletons A-H (384 variants)",
                  "cold": timed_predict(four, db, cache), "warm": timed_predict(four, db, cache),
                  "fifth_ivp": timed_predict(five, db, cache, ivp="Heat2D")}
        if args.shared_machine:
            shared = scenario_file(work / "shared.scenario.yaml", FOUR, args.shared_machine)
            report["cold_shared_machine"] = timed_predict(
                shared, work / "shared.h5", work / "shared-cache", machine_file=args.shared_machine)
        report["offsite_way"] = offsite_way(
            db, Path(loaded.machine.path), {i.name: i for i in load(five, "scenario").ivps},
            args.offsite_sample, report["cold"]["loops"], SIZES["points"], BIN / "kerncraft")
        report["targets"] = {"cold_s": 120, "warm_s": 5, "fifth_ivp_s": 30}
        report["speedup_vs_offsite_way"] = round(report["offsite_way"]["extrapolated_s"]
                                                 / report["cold"]["wall_s"], 1)
        if not args.skip_accuracy:
            sizes = tuple(load(PROJECT_ROOT / "scenarios" / "default.yaml", "scenario").sizes.values)
            report["accuracy"] = accuracy(loaded, db, args.accuracy_variants, sizes,
                                          args.accuracy_budget, lambda row: print(json.dumps(
                                              {k: v for k, v in row.items()
                                               if k != "variants_predicted_measured_s"}), flush=True))
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
