"""Benchmark "Generated variants": the pool's best and worst variant against numba, numpy and the
streaming bound, for Wave1D (memory-bound) and InverterChain (compute-bound), 1 and 2 threads.

Writes data/bench/generated.json and prints a markdown table. Run through jobs/bench_generated.sh.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from hybridtune.commands.progress import stamped as log
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.measure.provenance import build_identity, tree_state
from hybridtune.pipeline.generated_comparison import ComparisonRequest, compare_generated
from hybridtune.probe.host_facts import host_summary, read_host_facts
from hybridtune.report.generated_table import comparison_table, targets_line


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="every 8th variant of the pool")
    parser.add_argument("--n-small", type=int, default=4000, help="the in-L2 size (default 4000)")
    parser.add_argument("--large-factor", type=float, default=4.0,
                        help="n_large working set as a multiple of the memory regime's start")
    parser.add_argument("--max-large-ws-mib", type=int, default=128,
                        help="cap on the n_large working set in MiB (default 128; at most 2048)")
    parser.add_argument("--stream-repeats", type=int, default=5, help="triad curves per thread count")
    parser.add_argument("--output", default=str(PROJECT_ROOT / "data" / "bench" / "generated.json"))
    args = parser.parse_args(argv)
    if args.max_large_ws_mib > 2048:
        parser.error("--max-large-ws-mib: at most 2048")
    import numba                    # the bench extra; its version goes into the record
    started, clock = datetime.datetime.now().astimezone().isoformat(timespec="seconds"), time.monotonic()
    load_before, tree_start = os.getloadavg(), tree_state(PROJECT_ROOT)
    machine = {**host_summary(read_host_facts()), "gcc": build_identity()["compiler"]}
    request = ComparisonRequest(args.quick, args.n_small, args.large_factor,
                                args.max_large_ws_mib << 20, args.stream_repeats)
    found = compare_generated(load(PROJECT_ROOT / "scenarios" / "default.yaml", "scenario"), request,
                              machine.get("l2_bytes"), log)
    tree_end = tree_state(PROJECT_ROOT)
    record = {"benchmark": "generated variants", "quick": args.quick,
              "command": " ".join(["jobs/bench_generated.sh", *(argv or sys.argv[1:])]),
              "date": started, "git_commit": tree_start["commit"], "tree_at_start": tree_start,
              "tree_at_end": tree_end, "tree_changed_during_run": tree_start != tree_end,
              "machine": {**machine, "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
              "versions": {"python": platform.python_version(), "numpy": np.__version__,
                           "numba": numba.__version__},
              **found, "total_seconds": time.monotonic() - clock}
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(comparison_table(found["cases"]) + "\n\n" + targets_line(found["summary"], found["targets"]))
    if record["tree_changed_during_run"]:
        print("WARNING: the source tree changed during the run (see tree_at_start / tree_at_end)")
    print(f"total {record['total_seconds'] / 60:.1f} min; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
