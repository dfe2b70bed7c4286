"""Every choice of `make tune` live (the default scenario, one size, one thread), against a five-round interleaved re-timing of it with the ten fastest first timings (each round in a fresh random order): within 2% of the fastest, or the fastest named as tied. Writes data/bench/choice_check.json."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.measure.provenance import cpu_model
from hybridtune.pipeline.first_timings import first_timings
from hybridtune.pipeline.choice_check import checked_choice
from hybridtune.pipeline.variant_measuring import MeasureRequest

DEFAULT = ROOT / "scenarios" / "default.yaml"
TOP, ROUNDS, TARGET = 10, 5, 0.02


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=6000)
    parser.add_argument("--budget", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        store = Path(work) / "tuned.h5"
        done = subprocess.run([str(Path(sys.executable).parent / "hybridtune"), "tune",
                               str(DEFAULT), "--db", str(store), "-n", str(args.n), "--threads",
                               "1", "--budget", str(args.budget), "--json"],
                              capture_output=True, text=True, check=True)
        first = first_timings(store)
        request = MeasureRequest(str(DEFAULT), n=args.n, threads=[1], budget_s=args.budget,
                                 db=str(Path(work) / "rounds.h5"))
        results = [checked_choice(record, first[record["ivp"]], request, TOP, ROUNDS, TARGET)
                   for record in json.loads(done.stdout)["configurations"]]
    for found in results:
        print(f"{found['ivp']} n={args.n}: {100 * found['behind']:+.2f}% against the fastest of "
              f"{len(found['rounds'])} in {ROUNDS} rounds, {len(found['tied'])} tied: "
              f"{'passes' if found['passes'] else 'FAILS'}")
    out = ROOT / "data" / "bench" / "choice_check.json"
    out.write_text(json.dumps({"host": cpu_model(), "cores": len(os.sched_getaffinity(0)),
                               "command": "jobs/check_choice.sh " + " ".join(sys.argv[1:]),
                               "n": args.n, "passed": sum(r["passes"] for r in results),
                               "of": len(results), "results": results}, indent=1) + "\n")
    print(f"{sum(r['passes'] for r in results)} of {len(results)} choices pass; written {out}")


if __name__ == "__main__":
    main()
