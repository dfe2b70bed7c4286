"""Benchmark of the two shipped ground truths, replayed (no measuring): leave one IVP out on each host, and leave one host and one IVP out both ways.

Side by side: `hybridtune evaluate --db A --json --noise-seeds S` (host A's strategies and models),
the same with `--feature-sets --other-host B --no-strategies` (the feature sets, and hybrid on each
host with the other's model) and `evaluate --db B --feature-sets` (or, with --host-b-result FILE,
an earlier run's output). Writes data/bench/groundtruths.json (each host's CPU named).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from hybridtune.measure.provenance import cpu_model

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
HEADLINE = ("hybrid", "hybrid (no model)", "RunAll", "preselect:5")


def evaluate(store: str, seeds: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "hybridtune"), "evaluate", "--db", store, "--json",
                             "--noise-seeds", str(seeds), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def finished(process: subprocess.Popen, what: str) -> dict:
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"evaluate {what} failed ({process.returncode}): {err[-2000:]}")
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host-a", default="data/groundtruth/amd-epyc/ground-truth.h5")
    parser.add_argument("--host-b", default="data/groundtruth/ground-truth.h5")
    parser.add_argument("--noise-seeds", type=int, default=20)
    parser.add_argument("--host-b-result", type=Path,
                        help="the output of `hybridtune evaluate --db HOST_B --json --noise-seeds S "
                             "--feature-sets`, run before, instead of running it again")
    args = parser.parse_args()
    start, started = time.perf_counter(), time.strftime("%Y-%m-%dT%H:%M:%S")
    own = evaluate(args.host_a, args.noise_seeds)
    both = evaluate(args.host_a, args.noise_seeds, "--feature-sets", "--other-host", args.host_b,
                    "--no-strategies")
    other = None if args.host_b_result else evaluate(args.host_b, args.noise_seeds,
                                                     "--feature-sets")
    a, hosts = finished(own, args.host_a), finished(both, f"{args.host_a} with {args.host_b}")
    a["feature_sets"], a["hosts"] = hosts["feature_sets"], hosts["hosts"]
    b = json.loads(args.host_b_result.read_text()) if other is None else finished(other, args.host_b)
    report = {"command": "jobs/bench_groundtruths.sh " + " ".join(sys.argv[1:]),
              "started": started, "replayed_on": f"{platform.node()} ({cpu_model()})",
              "seconds": time.perf_counter() - start, "noise_seeds": args.noise_seeds,
              "host_a": {"store": args.host_a, **{k: a[k] for k in a if k != "hosts"}},
              "host_b": {"store": args.host_b, **b, **({"from_file": str(args.host_b_result)}
                                                      if args.host_b_result else {})},
              "hosts": a["hosts"]}
    out = ROOT / "data" / "bench" / "groundtruths.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    for name, result in (("A " + args.host_a, a), ("B " + args.host_b, b)):
        print(f"{name}:")
        for strategy in HEADLINE:
            row = result["strategies"].get(strategy)
            if row:
                print(f"  {strategy:<18} measured {row['measured_mean']:6.1f}  loss mean "
                      f"{row['loss_pct_mean']:5.2f}%  within 3% {100 * row['frac_loss_le_3pct']:3.0f}%"
                      f"  score {row['score']:.2f}")
        for ivp, acc in sorted(result["accuracy"].items()):
            print(f"  {ivp:<16} gp tau {acc['gp']['kendall_tau']:.2f}  median rel. error "
                  f"{acc['gp']['median_rel_error']:.1%}")
    for direction in a["hosts"]["directions"]:
        summary = direction["to_within"]
        print(f"{direction['from']} -> {direction['to']}: to within 3% "
              f"{summary['transferred']:.1f} (other host's model) / {summary['own']:.1f} (own): "
              f"ratio {summary['ratio']:.2f}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
