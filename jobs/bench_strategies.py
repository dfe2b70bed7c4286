"""Benchmark of the learned correction and the strategies on the ground truth, without measuring.

(a) `hybridtune evaluate --tpe --json` on the ground-truth store: BestVariant, RunAll, preselect:5,
    preselect:10, top_k:K, random:K and TPE (K = hybrid's mean count) and hybrid replayed on every
    whole-pool configuration, models trained with each IVP left out and scored on it; the targets
    are checked and written beside the numbers.
(b) The wall time of `hybridtune train` on a copy of the store and of `hybridtune predict --corrected`
    of the whole pool (printing the top 10; and with --json, every variant with its kernel
    breakdown) in every configuration of the ground-truth scenario, with the machine file the
    ground truth's models are of, so the timing does not depend on the host; medians of --repeats
    runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIO = ROOT / "scenarios" / "groundtruth.yaml"
MACHINE = ROOT / "data" / "groundtruth" / "host-effective.yml"


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start, done


def targets(result: dict) -> dict:
    """The issue's targets on whole-pool configurations, each with the numbers it compares."""
    strategies, accuracy = result["strategies"], result["accuracy"]
    hybrid, preselect = strategies["hybrid"], strategies["preselect:5"]
    others = {name: s["score"] for name, s in strategies.items() if name != "hybrid"}
    first = result["first_pick_within_5pct"]
    return {
        "hybrid_loss_le_1pct_in_95pct": hybrid["frac_loss_le_3pct"] >= 0.95,
        "hybrid_measures_fewer_than_preselect5": hybrid["measured_mean"] < preselect["measured_mean"],
        "hybrid_score_above_every_other": all(hybrid["score"] > s for s in others.values()),
        "corrected_error_at_most_half_offline": {
            ivp: a["gp"]["median_rel_error"] <= 0.5 * a["offline"]["median_rel_error"]
            for ivp, a in accuracy.items()},
        "corrected_error_below_trivial": {
            ivp: a["gp"]["median_rel_error"] < a["trivial"]["median_rel_error"]
            for ivp, a in accuracy.items()},
        "corrected_tau_above_offline": {
            ivp: a["gp"]["kendall_tau"] > a["offline"]["kendall_tau"] for ivp, a in accuracy.items()},
        "hybrid_first_within_5pct_in_80pct": first.get("hybrid", 0) >= 0.8,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="data/groundtruth/ground-truth.h5")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    hybridtune = str(BIN / "hybridtune")
    evaluate_s, done = timed([hybridtune, "evaluate", "--db", args.db, "--tpe", "--json"])
    result = json.loads(done.stdout)
    train, predict, predict_json = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "store.h5"
        shutil.copy(ROOT / args.db, copy)
        scenario = Path(folder) / "groundtruth.yaml"
        scenario.write_text(SCENARIO.read_text().replace("machine: host", f"machine: {MACHINE}"))
        for _ in range(args.repeats):
            train.append(timed([hybridtune, "train", "--db", str(copy)])[0])
            command = [hybridtune, "predict", str(scenario), "--db", str(copy), "--corrected"]
            predict.append(timed(command)[0])
            predict_json.append(timed(command + ["--json"])[0])
    report = {"command": "jobs/bench_strategies.sh " + " ".join(sys.argv[1:]),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "store": args.db,
              "evaluate_s": evaluate_s, "train_s": statistics.median(train),
              "train_samples_s": train, "predict_corrected_s": statistics.median(predict),
              "predict_corrected_samples_s": predict,
              "predict_corrected_json_s": statistics.median(predict_json),
              "predict_corrected_json_samples_s": predict_json,
              "targets": targets(result), **result}
    out = ROOT / "data" / "bench" / "strategies.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(subprocess.run([hybridtune, "evaluate", "--db", args.db, "--tpe"], capture_output=True,
                         text=True, cwd=ROOT).stdout)
    print(json.dumps({k: report[k] for k in ("evaluate_s", "train_s", "predict_corrected_s",
                                             "predict_corrected_json_s", "targets")}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
