"""Hybrid live on a host with no model for its hardware, judged against strong variants re-timed in alternating rounds.

Per IVP of the default scenario (one size, one thread): `tune --strategy hybrid` and an independent
`random:K:SEED` sample, each on a fresh store; the strong variants (hybrid's choice, FROM_EACH
fastest first timings of each run) measured in ROUNDS rounds, every other one in reverse order;
hybrid's choice against the mean of the three fastest medians (strategies/strong_variants), within
TARGET or not. Writes data/bench/hybrid_host.json with the host's CPU named.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.measure.provenance import cpu_model
from hybridtune.pipeline.first_timings import first_timings
from hybridtune.pipeline.variant_measuring import MeasureRequest, timed_rounds
from hybridtune.strategies.strong_variants import cover, judged, round_order, strong_variants

BIN = Path(sys.executable).parent
DEFAULT = ROOT / "scenarios" / "default.yaml"
FROM_EACH = 5
ROUNDS = 3
TARGET = 0.05


def run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-3000:]}")
    return done.stdout


def tune(scenario: Path, store: Path, strategy: str, args) -> tuple[dict, list]:
    """The one configuration's record of a tune run and the run's notes."""
    found = json.loads(run([
        str(BIN / "hybridtune"), "tune", str(scenario), "--db", str(store), "-n", str(args.n),
        "--threads", "1", "--strategy", strategy, "--budget", str(args.budget), "--head", "0",
        "--json"]))
    [configuration] = found["configurations"]
    return configuration, found.get("notes", [])


def check(ivp: str, work: Path, args) -> dict:
    scenario = work / f"{ivp}.yaml"
    scenario.write_text("\n".join(
        f"ivps: [{ivp}]" if line.startswith("ivps:") else line
        for line in DEFAULT.read_text().splitlines()) + "\n")
    start = time.monotonic()
    hybrid, notes = tune(scenario, work / f"{ivp}-hybrid.h5", "hybrid", args)
    t_hybrid = time.monotonic() - start
    tune(scenario, work / f"{ivp}-random.h5", f"random:{args.sample}:{args.seed}", args)
    mine = first_timings(work / f"{ivp}-hybrid.h5").get(ivp, {})
    theirs = first_timings(work / f"{ivp}-random.h5").get(ivp, {})
    chosen = hybrid["chosen"]["id"]
    strong = strong_variants(chosen, mine, theirs, FROM_EACH)
    timed = timed_rounds(MeasureRequest(str(scenario), n=args.n, threads=[1],
                                        budget_s=args.budget, db=str(work / f"{ivp}-rounds.h5")),
                         strong, ROUNDS, round_order)
    covered = cover(hybrid["shortlisted"])
    return {"ivp": ivp, "n": args.n, "chosen": chosen, "measured": len(mine),
            "hybrid_seconds": round(t_hybrid, 1), "ended_by": hybrid.get("ended_by", ""),
            "prior": " ".join(notes), "cover": len(covered),
            "cover_measured": all(i in mine for i in covered),
            "sample_measured": len(theirs), "strong": len(strong),
            "rounds": {i: timed[i] for i in strong}, **judged(timed, chosen, TARGET)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ivp", action="append", help="IVPs (default: the default scenario's)")
    parser.add_argument("-n", type=int, default=6000)
    parser.add_argument("--budget", type=float, default=0.3)
    parser.add_argument("--sample", type=int, default=48)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(ROOT / "data" / "bench" / "hybrid_host.json"))
    args = parser.parse_args()
    ivps = args.ivp or ["Cusp", "InverterChain", "Medakzo", "Wave1D"]
    results = []
    with tempfile.TemporaryDirectory() as work:
        for ivp in ivps:
            found = check(ivp, Path(work), args)
            results.append(found)
            print(f"{ivp} n={args.n}: hybrid measured {found['measured']}, chose {found['chosen']}"
                  f" at {100 * found['chosen_vs_reference']:+.1f}% against the mean of the three "
                  f"fastest of {found['strong']} strong variants re-timed in {ROUNDS} rounds "
                  f"({'within' if found['within_target'] else 'NOT within'} "
                  f"{100 * TARGET:.0f}%); its cover of {found['cover']} "
                  f"{'measured' if found['cover_measured'] else 'NOT measured'}; stopped: "
                  f"{found['ended_by']}", flush=True)
    Path(args.out).write_text(json.dumps({
        "host": cpu_model(), "cores": len(os.sched_getaffinity(0)),
        "command": "jobs/check_hybrid_host.sh " + " ".join(sys.argv[1:]), "rounds": ROUNDS,
        "target": TARGET, "results": results}, indent=1) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
