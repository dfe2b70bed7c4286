"""Benchmark of the judge's speed: `hybridtune evaluate --json --noise-seeds S` on ground-truth stores.

Each store is evaluated by the CLI in a child process (the hybridtune importable here: run it with
PYTHONPATH set to another checkout to time that one); its wall time and CPU time (user + system, of
the child) are appended under --label to data/bench/judge_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone

from hybridtune.describe.library import PROJECT_ROOT

OUT = PROJECT_ROOT / "data" / "bench" / "judge_speed.json"
STORES = ("data/groundtruth/amd-epyc/ground-truth.h5", "data/groundtruth/ground-truth.h5")


def commit_of(folder: str) -> str:
    found = subprocess.run(["git", "-C", folder, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True)
    return found.stdout.strip()


def timed(store: str, seeds: int) -> dict:
    """One evaluation of the store, its output discarded: wall and CPU seconds, exit status."""
    command = [sys.executable, "-m", "hybridtune.commands.main", "evaluate", "--db",
               str(PROJECT_ROOT / store), "--json", "--noise-seeds", str(seeds)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"store": store, "noise_seeds": seeds, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "exit": done.returncode,
            "command": f"hybridtune evaluate --db {store} --json --noise-seeds {seeds}",
            "error_tail": done.stderr[-400:] if done.returncode else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="what is timed, e.g. before or after")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--stores", nargs="+", default=list(STORES))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    checkout = os.environ.get("PYTHONPATH") or str(PROJECT_ROOT)
    runs = []
    for store in args.stores:
        runs.append(timed(store, args.seeds))
        print(json.dumps(runs[-1]), flush=True)
    entry = {"label": args.label, "commit": commit_of(checkout), "checkout": checkout,
             "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "host": platform.node(), "cpus": os.cpu_count(),
             "load_1min_at_end": round(os.getloadavg()[0], 2), "runs": runs}
    document = json.loads(open(args.out).read()) if os.path.exists(args.out) else {"entries": []}
    document["entries"].append(entry)
    with open(args.out, "w") as out:
        json.dump(document, out, indent=1)
    return 0 if all(run["exit"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
