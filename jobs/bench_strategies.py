"""Benchmark of the learned correction and the strategies on the ground truth, without measuring.

(a) `hybridtune evaluate --tpe --json --noise-seeds 20` on the ground-truth store: every strategy
    replayed under the store's noise, the models scored with each IVP left out, the targets checked.
(b) The wall time (medians of --repeats runs) of `hybridtune train` on a copy of the store and of
    `hybridtune predict --corrected` (text and --json) of the ground-truth scenario's whole pools,
    with the machine file the ground truth's models are of, so the timing does not depend on the host.
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

from hybridtune.commands.evaluation_text import reliability_lines
from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.strategies.evaluation_targets import evaluation_targets, strategy_table_lines

BIN = Path(sys.executable).parent
SCENARIO = ROOT / "scenarios" / "groundtruth.yaml"
MACHINE = ROOT / "data" / "groundtruth" / "host-effective.yml"


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="data/groundtruth/ground-truth.h5")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--noise-seeds", type=int, default=20)
    args = parser.parse_args()
    hybridtune = str(BIN / "hybridtune")
    evaluate_s, done = timed([hybridtune, "evaluate", "--db", args.db, "--tpe", "--json",
                              "--noise-seeds", str(args.noise_seeds)])
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
              "targets": evaluation_targets(result), **result}
    out = ROOT / "data" / "bench" / "strategies.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print("\n".join(strategy_table_lines(result) + reliability_lines(result["reliability"])))
    print(json.dumps({k: report[k] for k in ("evaluate_s", "train_s", "predict_corrected_s",
                                             "predict_corrected_json_s", "targets")}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
