"""The adaptive tuned library on a store's configurations: the variant it keeps against a separate interleaved re-timing of its candidates, and its overhead against the same library fixed to that variant, stepped beside it through the same steps in turns. Writes data/bench/adaptive.json."""

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

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.describe.loader import load
from hybridtune.measure.provenance import cpu_model
from hybridtune.pipeline.adaptive_check import (OVERHEAD, WITHIN, accounted_overhead,
                                                against_retiming)

BIN = Path(sys.executable).parent


def build(work: Path, scenario: str, db: str, ivp: str, candidates: int) -> tuple[Path, dict]:
    """The IVP's adaptive library and the benchmark program on it; the library's table."""
    name = f"ht_{ivp.lower()}"
    folder = work / name
    subprocess.run([str(BIN / "hybridtune"), "export", scenario, "--tuned", "--db", db, "--ivp",
                    ivp, "--name", name, "--candidates", str(candidates), "-o", str(folder)],
                   check=True, capture_output=True)
    subprocess.run(["make", "-s", "-C", str(folder)], check=True, capture_output=True)
    program = work / f"bench_{name}"
    subprocess.run(["gcc", "-O2", "-fopenmp", f"-DLIB={name}", f'-DLIB_HEADER="{name}.h"', "-I",
                    str(folder), str(ROOT / "jobs" / "bench_adaptive.c"),
                    str(folder / f"lib{name}.a"), "-lm", "-o", str(program)], check=True)
    return program, json.loads((folder / f"{name}.json").read_text())


def pinned(threads: int, **extra) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PLACES": "cores",
            "OMP_PROC_BIND": "close", **extra}


def compared(program: Path, n: int, steps: int, threads: int, chunk: int, order: str, ids: list,
             report: Path) -> tuple:
    """(adaptive seconds, the kept variant's fixed seconds, kept variant, candidates)."""
    done = subprocess.run([str(program), "compare", str(n), str(steps), str(threads), str(chunk),
                           order, *ids], capture_output=True, text=True, check=True,
                          env=pinned(threads, HYBRIDTUNE_REPORT=str(report)))
    adaptive, fixed, variant, candidates = done.stdout.split()
    return float(adaptive), float(fixed), variant, int(candidates)


def retimed(program: Path, n: int, threads: int, rounds: int, turn: int, ids: list) -> dict:
    done = subprocess.run([str(program), "retime", str(n), str(threads), str(rounds), str(turn),
                           *ids], capture_output=True, text=True, check=True,
                          env=pinned(threads))
    return {line.split()[0]: [float(x) for x in line.split()[1:]]
            for line in done.stdout.splitlines()}


def configuration(program: Path, table: dict, n: int, threads: int, args, work: Path) -> dict:
    rule = next(r for r in table["rules"] if r["ranks"] == 1 and r["threads"] == threads
                and r["n_low"] <= n and (r["n_high"] is None or n < r["n_high"]))
    ids = [c["variant"] for c in rule["candidates"]]
    out = {"ivp": table["ivp"], "n": n, "threads": threads, "candidates": ids,
           "measured": rule["measured"]}
    if len(ids) < 2:
        return {**out, "skipped": "the range holds one candidate (not measured)"}
    pairs, kept_ids, accounted = [], [], []
    for pair in range(args.pairs):
        report = work / f"report-{table['ivp']}-{threads}-{pair}.jsonl"
        order = "adaptive-first" if pair % 2 == 0 else "fixed-first"
        adaptive, fixed, variant, _ = compared(program, n, args.steps, threads, args.chunk, order,
                                               ids, report)
        kept_ids.append(variant)
        pairs.append(adaptive / fixed - 1)
        lines = [line for line in map(json.loads, report.read_text().splitlines())
                 if line["candidates"] > 1]                      # the adaptive context's
        accounted.append(accounted_overhead(lines, args.steps))
    rounds = retimed(program, n, threads, args.rounds, args.turn, ids)
    kept = max(set(kept_ids), key=kept_ids.count)
    # the contexts made first run slower here: the mean over both orders of making them
    overhead = float(np.expm1(np.mean(np.log1p(pairs)))) if pairs else float("nan")
    return {**out, "kept": kept, "kept_each_run": kept_ids, **against_retiming(rounds, kept),
            "overhead_pairs": pairs,
            "overhead": overhead, "overhead_accounted": float(np.median(accounted)),
            "overhead_ok": overhead < OVERHEAD}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=str(ROOT / "data" / "store" / "hybridtune.h5"),
                        help="a tuned store (default: make tune's)")
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "default.yaml"))
    parser.add_argument("-n", type=int, default=600000)
    parser.add_argument("--threads", type=int, action="append")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=2, help="comparisons, each in a process of "
                        "its own, the adaptive context made first in every other (default 2)")
    parser.add_argument("--chunk", type=int, default=50,
                        help="steps a turn of the comparison (default 50)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turn", type=int, default=20, help="steps a turn of the re-timing")
    args = parser.parse_args()
    scenario = load(args.scenario, "scenario")
    started = time.time()
    results = []
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        for ivp in scenario.ivps:
            program, table = build(work, args.scenario, args.db, ivp.name, args.candidates)
            for threads in args.threads or scenario.threads:
                found = configuration(program, table, args.n, threads, args, work)
                results.append(found)
                if "skipped" in found:
                    print(f"{ivp.name} n={args.n} t={threads}: skipped, {found['skipped']}")
                    continue
                print(f"{ivp.name} n={args.n} t={threads}: kept {found['kept']} of "
                      f"{len(found['candidates'])}; {100 * found['behind']:+.2f}% against the "
                      f"re-timing's best{' (tied)' if found['tied'] else ''}; overhead "
                      f"{100 * found['overhead']:+.2f}% measured "
                      f"({', '.join(f'{100 * p:+.2f}%' for p in found['overhead_pairs'])}), "
                      f"{100 * found['overhead_accounted']:+.3f}% accounted")
    done = [r for r in results if "skipped" not in r]
    out = ROOT / "data" / "bench" / "adaptive.json"
    out.write_text(json.dumps({
        "host": cpu_model(), "cores": len(os.sched_getaffinity(0)),
        "command": "jobs/bench_adaptive.sh " + " ".join(sys.argv[1:]), "n": args.n,
        "steps": args.steps, "seconds": round(time.time() - started, 1),
        "within": sum(r["within"] for r in done), "overhead_ok": sum(r["overhead_ok"] for r in done),
        "of": len(done), "results": results}, indent=1) + "\n")
    print(f"{sum(r['within'] for r in done)} of {len(done)} kept within {100 * WITHIN:g}% or tied; "
          f"{sum(r['overhead_ok'] for r in done)} of {len(done)} below {100 * OVERHEAD:g}% "
          f"overhead; written {out}")


if __name__ == "__main__":
    main()
