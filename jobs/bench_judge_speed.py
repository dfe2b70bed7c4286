"""Benchmark of the judge's speed: `hybridtune evaluate --json --noise-seeds S` on ground-truth stores.

Each store is evaluated by the CLI in a child process (the hybridtune importable here: run it with
PYTHONPATH set to another checkout to time that one); its wall time and CPU time (user + system, of
the child) are appended under --label to data/bench/judge_speed.json.
"""

import argparse
import json
import os
import sys
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.pipeline.command_timing import append_entry, bench_entry, timed_command

STORES = ("data/groundtruth/amd-epyc/ground-truth.h5", "data/groundtruth/ground-truth.h5")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="what is timed, e.g. before or after")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--stores", nargs="+", default=list(STORES))
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "data/bench/judge_speed.json")
    args = parser.parse_args()
    runs = []
    for store in args.stores:
        options = ["--json", "--noise-seeds", str(args.seeds)]
        timing = timed_command([sys.executable, "-m", "hybridtune.commands.main", "evaluate",
                                "--db", str(PROJECT_ROOT / store), *options])
        runs.append({"store": store, "noise_seeds": args.seeds, "wall_s": round(timing.wall_s, 1),
                     "cpu_s": round(timing.cpu_s, 1), "exit": timing.exit,
                     "command": " ".join(["hybridtune evaluate --db", store, *options]),
                     "error_tail": timing.stderr[-400:] if timing.exit else ""})
        print(json.dumps(runs[-1]), flush=True)
    checkout = Path(os.environ.get("PYTHONPATH") or PROJECT_ROOT)
    append_entry(args.out, bench_entry(args.label, checkout, runs))
    return 0 if all(run["exit"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
