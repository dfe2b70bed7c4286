"""Benchmark of the kerncraft adapter's speed-ups of OSACA: the offline stage of a scenario, cold.

The speed-ups (predict/osaca_speedups.py): each distinct assembly line parsed once per process
(`memoise_att_lines`), and a loop's carried dependencies searched in the analysis's own process
(`dependencies_in_process`).
Each round predicts the scenario twice in new processes, once with them and once without (the
order alternating between rounds), each with an empty store and an empty kerncraft cache; the
kernel predictions of the two are compared row by row. Writes data/bench/analysis_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.measure.provenance import hardware_identity
from hybridtune.pipeline.command_timing import append_entry, bench_entry, timed_command
from hybridtune.store.database import Store

# the child: predict the scenario, with the speed-ups switched off where asked
CHILD = """
import sys
import hybridtune.predict.osaca_speedups as speedups
if sys.argv[1] == "off":
    speedups.memoise_att_lines = speedups.dependencies_in_process = lambda: None
from hybridtune.commands.main import main
sys.exit(main(["predict", sys.argv[2], "--db", sys.argv[3], "--head", "1"]))
"""
COMPARED = ("key", "status", "message", "cycles_per_cl", "iterations_per_cl", "saturation_cores",
            "contributions")


def predictions(db: Path) -> list:
    with Store.open(db, "r") as store:
        frame = store.frame("kernel_predictions")
    return sorted(tuple(str(row[c]) for c in COMPARED) for _, row in frame.iterrows())


def one_run(mode: str, scenario: Path, folder: Path) -> dict:
    db, cache = folder / f"{mode}.h5", folder / f"cache-{mode}"
    out = timed_command([sys.executable, "-c", CHILD, mode, str(scenario), str(db)],
                        {**os.environ, "HYBRIDTUNE_CACHE": str(cache)})
    if out.exit != 0:
        sys.exit(f"predict ({mode}) failed ({out.exit}): {out.stderr[-2000:]}")
    return {"speedups": mode, "wall_s": round(out.wall_s, 2), "cpu_s": round(out.cpu_s, 2),
            "predictions": predictions(db)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", default=str(PROJECT_ROOT / "scenarios" / "default.yaml"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output",
                        default=str(PROJECT_ROOT / "data" / "bench" / "analysis_speed.json"))
    args = parser.parse_args()
    runs, same = [], True
    for index in range(args.rounds):
        order = ("off", "on") if index % 2 == 0 else ("on", "off")
        with tempfile.TemporaryDirectory() as folder:
            pair = {mode: one_run(mode, Path(args.scenario), Path(folder)) for mode in order}
        same = same and pair["on"]["predictions"] == pair["off"]["predictions"]
        for mode in order:
            run = pair[mode]
            runs.append({"round": index + 1, "speedups": mode, "wall_s": run["wall_s"],
                         "cpu_s": run["cpu_s"], "kernel_predictions": len(run["predictions"])})
            print(runs[-1], flush=True)
    medians = {mode: statistics.median(r["wall_s"] for r in runs if r["speedups"] == mode)
               for mode in ("off", "on")}
    entry = {**bench_entry("OSACA speed-ups in the kerncraft adapter, cold offline stage",
                           PROJECT_ROOT, runs),
             "scenario": os.path.relpath(args.scenario, PROJECT_ROOT),
             "hardware": hardware_identity()["hardware"],
             "median_wall_s": medians,
             "ratio_on_over_off": round(medians["on"] / medians["off"], 3),
             "same_predictions": same}
    append_entry(Path(args.output), entry)
    print(json.dumps({k: entry[k] for k in ("median_wall_s", "ratio_on_over_off",
                                            "same_predictions")}))
    if not same:
        sys.exit("the speed-ups changed the kernel predictions")


if __name__ == "__main__":
    main()
