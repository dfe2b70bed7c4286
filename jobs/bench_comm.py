"""Benchmark of point-to-point messages between two MPI ranks on this node: ping-pong runs and Hockney's model fitted to each, judged at held-out sizes.

Each run measures every size once (0 B and powers of two from 8 B to 4 MiB, in random order, the
order drawn anew per run); the fit of each run, its pieces, n_1/2 and its error at the held-out
sizes are written to data/bench/comm.json with the host's CPU and the MPI library.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hybridtune.measure.comm_bench import pingpong          # noqa: E402
from hybridtune.measure.provenance import hardware_identity  # noqa: E402
from hybridtune.predict.hockney import fit_hockney           # noqa: E402

SIZES = [0] + [2 ** k for k in range(3, 23)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    generator = random.Random(1)
    runs = []
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    for _ in range(args.runs):
        order = SIZES[:]
        generator.shuffle(order)
        run = pingpong(order, reps=args.reps)
        medians = sorted((p.bytes, p.median_s) for p in run.points)
        fit = fit_hockney(medians)
        runs.append({"library": run.library, "points": [asdict(p) for p in run.points],
                     "fit": {"pieces": [{**asdict(p), "n_half": p.n_half} for p in fit.pieces],
                             "fit_error": fit.fit_error, "held_out_error": fit.held_out_error,
                             "held_out_bytes": list(fit.held_out_bytes), "note": fit.note}})
        print(f"run {len(runs)}: {fit.note}; " + "; ".join(
            f"from {p.from_bytes} B alpha {p.alpha_s * 1e6:.2f} us, {1e-9 / p.beta_s_per_byte:.2f} GB/s"
            f", n_1/2 {p.n_half:.0f} B" for p in fit.pieces))
    held = [r["fit"]["held_out_error"] for r in runs]
    identity = hardware_identity()
    report = {"command": "jobs/bench_comm.sh " + " ".join(sys.argv[1:]), "started": started,
              "host": platform.node(), "cpu": identity["hardware"]["model"],
              "hardware_id": identity["hardware_id"], "ranks": 2, "sizes": SIZES,
              "held_out_error_median": statistics.median(held), "held_out_error_max": max(held),
              "runs": runs}
    out = ROOT / "data" / "bench" / "comm.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"held-out error of the fits: median {statistics.median(held):.1%}, "
          f"max {max(held):.1%} over {len(runs)} runs; wrote {out}")


if __name__ == "__main__":
    main()
