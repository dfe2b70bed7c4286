"""Benchmark of a space-filling share of the training runs' measurements, from the ground truth (no measuring).

`hybridtune evaluate --sample-shares 0,0.25,0.5 --noise-seeds 3 --json` on the ground-truth store:
for each share S and each IVP left out, a Gaussian process trained only on what preselect:5+sample:S
runs would have measured of the other IVPs; its accuracy on the left-out IVP and hybrid's replays
with it under 3 noise seeds. Writes data/bench/sample.json and prints the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="data/groundtruth/ground-truth.h5")
    parser.add_argument("--shares", default="0,0.25,0.5")
    parser.add_argument("--noise-seeds", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    done = subprocess.run([str(BIN / "hybridtune"), "evaluate", "--db", args.db, "--json",
                           "--noise-seeds", str(args.noise_seeds), "--sample-shares", args.shares],
                          capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"evaluate failed ({done.returncode}): {done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    report = {"command": "jobs/bench_sample.sh " + " ".join(sys.argv[1:]),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "store": args.db,
              "seconds": time.perf_counter() - start, "noise": result["noise"],
              "sample_shares": result["sample_shares"]}
    out = ROOT / "data" / "bench" / "sample.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    for v in result["sample_shares"]:
        print(f"{v['strategy']:<24} training runs measured {v['training_measured_per_configuration']:.1f}"
              f" per configuration; model rel.err {v['median_rel_error']:.3f}, tau "
              f"{v['kendall_tau']:.2f}; hybrid then {v['hybrid_measured_mean']:.1f} measured, loss "
              f"{v['hybrid_loss_pct_mean']:.2f}%, {100 * v['hybrid_frac_loss_le_3pct']:.0f}% within 3%")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
