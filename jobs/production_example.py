"""The tuned solver in a user's MPI program, end to end: tune, export with candidates, run adaptive and reporting under mpiexec on 1 and 2 ranks (checked against the reference), then store import, retrain and the changed prediction. Writes data/bench/production_example.json."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hybridtune.compiler.build import mpi_compiler
from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.measure.launch_env import child_environment, nested_mpi_command
from hybridtune.measure.provenance import cpu_model

BIN = Path(sys.executable).parent
SCENARIO = """name: production-example
methods: [radauIIA7]
ivps: [Wave1D]
skeletons: [F, F-mpi]
machine: host
n: [{n}]
threads: [1]
ranks: [1, 2]
strategy: top_k:12
"""
CANDIDATES = 3
AGREE = 1e-10            # the largest relative difference from the reference state allowed


def hybridtune(*args) -> str:
    done = subprocess.run([str(BIN / "hybridtune"), *map(str, args)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"hybridtune {' '.join(map(str, args))} failed ({done.returncode}):\n"
                 f"{done.stderr}")
    return done.stdout


def corrected(work: Path, store: Path, n: int) -> dict:
    """variant -> (corrected seconds, low, high) at n on one rank of one thread."""
    answer = json.loads(hybridtune("predict", work / "scenario.yaml", "--db", store, "-n", n,
                                   "--ranks", 1, "--threads", 1, "--corrected", "--json"))
    return {v["id"]: (v["corrected"]["seconds"], v["corrected"]["low_s"],
                      v["corrected"]["high_s"])
            for c in answer["configurations"] for v in c["variants"] if v.get("corrected")}


def run(work: Path, ranks: int, n: int, steps: int, report: Path) -> dict:
    """The program on `ranks` ranks, adaptive and reporting, its state against the reference."""
    state = work / f"state-{ranks}-{n}.bin"
    env = {**child_environment(os.environ), "HYBRIDTUNE_ADAPT": "1",
           "HYBRIDTUNE_REPORT": str(report), "OMP_NUM_THREADS": "1", "OMP_PLACES": "cores",
           "OMP_PROC_BIND": "close"}
    done = subprocess.run(nested_mpi_command(ranks, [str(work / "program"), str(n), str(steps),
                                                     str(state)], cores_per_rank=1),
                          capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"the program on {ranks} rank(s) failed ({done.returncode}):\n{done.stderr}")
    words = done.stdout.split()
    found = dict(zip(words[::2], words[1::2]))
    h = float(found["h"])
    reference = work / f"reference-{n}-{steps}.npy"
    if not reference.exists():
        hybridtune("solve", "--method", "radauIIA7", "--ivp", "Wave1D", "-n", n, "--t1",
                   repr(steps * h), "--steps", steps, "--out", reference)
    want, got = np.load(reference), np.fromfile(state, dtype=np.float64)
    error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    return {"ranks": ranks, "n": n, "steps": steps, "variant": found["variant"],
            "candidates": int(found["candidates"]), "measured": bool(int(found["measured"])),
            "seconds": float(found["seconds"]), "relative_error": error, "agrees": error <= AGREE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20000, help="the size tuned and run (default 20000)")
    parser.add_argument("--unmeasured", type=int, default=200000,
                        help="a size predicted, never measured, run once on one rank")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it (default: a "
                        "temporary folder)")
    args = parser.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(args.keep or temporary)
        work.mkdir(parents=True, exist_ok=True)
        store, report = work / "store.h5", work / "report.jsonl"
        report.unlink(missing_ok=True)
        (work / "scenario.yaml").write_text(SCENARIO.format(n=args.n))
        print(f"tuning Wave1D at n = {args.n} on 1 and 2 ranks (top 12 of F and F-mpi) ...")
        hybridtune("tune", work / "scenario.yaml", "--db", store, "--budget", "0.3")
        hybridtune("predict", work / "scenario.yaml", "--db", store, "-n", args.unmeasured)
        hybridtune("train", "--db", store, "--kind", "gp")
        before = corrected(work, store, args.unmeasured)
        hybridtune("export", work / "scenario.yaml", "--tuned", "--db", store, "--name", "wave",
                   "--candidates", CANDIDATES, "-o", work / "wave")
        cc = mpi_compiler()
        subprocess.run(["make", "-s", "-C", str(work / "wave"), f"CC={cc}"], check=True,
                       capture_output=True)
        subprocess.run([cc, "-O2", "-fopenmp", "-I", str(work / "wave"),
                        str(ROOT / "jobs" / "production_example.c"),
                        str(work / "wave" / "libwave.a"), "-lm", "-o", str(work / "program")],
                       check=True)
        runs = [run(work, ranks, args.n, args.steps, report) for ranks in (1, 2)]
        runs.append(run(work, 1, args.unmeasured, max(100, args.steps // 10), report))
        lines = [json.loads(line) for line in report.read_text().splitlines()]
        imported = hybridtune("store", "import", report, "--db", store).strip()
        hybridtune("train", "--db", store, "--kind", "gp")
        after = corrected(work, store, args.unmeasured)
    production = next(line for line in lines if line["n"] == args.unmeasured and line["kept"])
    variant = production["variant"]
    round_trip = {"n": args.unmeasured, "variant": variant,
                  "production_median_s": production["median_s"],
                  "production_p10_s": production["p10_s"], "production_p90_s": production["p90_s"],
                  "corrected_before": before.get(variant), "corrected_after": after.get(variant)}
    for when, found in (("before", before), ("after", after)):
        round_trip[f"{when}_within_production_spread"] = bool(
            found.get(variant) and production["p10_s"] <= found[variant][0] <= production["p90_s"])
    adapted = [{key: line[key] for key in ("n", "ranks", "variant", "kept", "steps", "median_s",
                                          "p10_s", "p90_s")} for line in lines]
    result = {"host": cpu_model(), "cores": len(os.sched_getaffinity(0)),
              "command": "jobs/production_example.sh " + " ".join(sys.argv[1:]),
              "seconds": round(time.time() - started, 1), "runs": runs, "report_lines": adapted,
              "import": imported, "round_trip": round_trip}
    for entry in runs:
        print(f"{entry['ranks']} rank(s), n = {entry['n']}, {entry['steps']} steps: "
              f"{entry['variant']} kept of {entry['candidates']} candidate(s), "
              f"{entry['seconds']:.3f} s; state {'agrees' if entry['agrees'] else 'DISAGREES'} "
              f"with the reference (relative {entry['relative_error']:.1e})")
    print(imported)
    low, high = production["p10_s"], production["p90_s"]
    print(f"n = {args.unmeasured}, {variant}: corrected prediction "
          f"{before[variant][0]:.4e} s before, {after[variant][0]:.4e} s after the import; "
          f"production measured {production['median_s']:.4e} s (p10 {low:.4e}, p90 {high:.4e})")
    out = ROOT / "data" / "bench" / "production_example.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written {out}")
    if not all(entry["agrees"] for entry in runs):
        sys.exit("a run's state disagrees with the reference")


if __name__ == "__main__":
    main()
