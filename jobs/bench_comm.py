"""Benchmark of communication between two MPI ranks on this node: message models and MPI variants.

Part 1, messages (--runs times each, pipeline/comm_study): the fitted models judged at sizes they
never saw. Part 2, variants: scenarios/mpi.yaml predicted and measured in 1x1, 2x1 and 1x2 layouts
(--pool sample: the variants that use every kernel variant; --pool all: about an hour per IVP).
Part 3, corrections (strategies/layout_accuracy): the gp correction model, each IVP left out in
turn (--corrections-only: this part alone, on the last run's store). Writes data/bench/comm.json
and the variants' store data/bench/comm-variants.h5.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from dataclasses import replace

from hybridtune.describe.library import PROJECT_ROOT, host_machine_file
from hybridtune.describe.loader import load
from hybridtune.learn.table import joined_rows
from hybridtune.measure.provenance import hardware_identity
from hybridtune.measure.runner import MeasureOptions
from hybridtune.pipeline.comm_study import measure_layouts, messages
from hybridtune.store import Store
from hybridtune.strategies.layout_accuracy import layout_corrections

OUT = PROJECT_ROOT / "data" / "bench" / "comm.json"
STORE = PROJECT_ROOT / "data" / "bench" / "comm-variants.h5"


def log(text: str) -> None:
    print(text, flush=True)


def corrections() -> dict:
    with Store.open(STORE, "r") as store:
        rows = joined_rows(store.frame("variant_predictions"), store.frame("measurements"))
    return layout_corrections(rows, lambda ivp, errors: log(f"corrections, {ivp} left out: " + "; ".join(
        f"{layout} " + ", ".join(f"{k} {v:.1%}" for k, v in e.items()) for layout, e in errors.items())))


def write(report: dict) -> None:
    OUT.write_text(json.dumps(report, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--pool", choices=("sample", "all"), default="sample")
    parser.add_argument("--skip-variants", action="store_true")
    parser.add_argument("--ivps", help="comma-separated IVPs of scenarios/mpi.yaml (default: all)")
    parser.add_argument("--corrections-only", action="store_true", help="judge the correction "
                        "models again on the last run's variants' store, measuring nothing")
    args = parser.parse_args()
    if args.corrections_only:
        report = json.loads(OUT.read_text())
        report["corrections"] = {**corrections(), "command": "jobs/bench_comm.sh --corrections-only"}
        write(report)
        return print(f"wrote {OUT}")
    clock, identity = time.monotonic(), hardware_identity()
    report = {"command": "jobs/bench_comm.sh " + " ".join(sys.argv[1:]),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(),
              "cpu": identity["hardware"]["model"], "hardware_id": identity["hardware_id"],
              "ranks": 2, "machine_file": host_machine_file()[1],
              "messages": messages(args.runs, args.reps, random.Random(1), log)}
    if not args.skip_variants:
        scenario = load(PROJECT_ROOT / "scenarios" / "mpi.yaml")
        if args.ivps:
            wanted = args.ivps.split(",")
            scenario = replace(scenario, ivps=tuple(i for i in scenario.ivps if i.name in wanted))
        STORE.unlink(missing_ok=True)
        options = replace(MeasureOptions(), ci_target=0.03, budget_s=0.5)
        report["variants"] = measure_layouts(scenario, args.pool == "all", options, STORE, log)
        report["store"] = str(STORE.relative_to(PROJECT_ROOT))
        write({**report, "wall_s": time.monotonic() - clock})   # kept should the corrections fail
        report["corrections"] = corrections()
    report["wall_s"] = time.monotonic() - clock
    write(report)
    print(json.dumps({"summary": report["messages"]["summary"], "judged": report.get(
        "variants", {}).get("judged"), "corrections": report.get("corrections")}, indent=1))
    print(f"wrote {OUT} in {report['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
