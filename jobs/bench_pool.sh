#!/usr/bin/env bash
# Every variant of the default pool (Radau IIA(7), skeletons A-H) for the four paper IVPs at a small n:
# generated, compiled, checked against the reference and timed. Writes data/bench/pool.json and
# prints the status counts per IVP. Usage: jobs/bench_pool.sh [N] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-600}
threads=${2:-1}
mkdir -p data/bench
.venv/bin/hybridtune measure scenarios/default.yaml -n "$n" --threads "$threads" --budget 0.3 \
    --ci 0.03 --json > data/bench/pool.json.tmp
mv data/bench/pool.json.tmp data/bench/pool.json
.venv/bin/python - <<'PY'
import collections, json
rows = json.load(open("data/bench/pool.json"))
by_ivp = collections.defaultdict(collections.Counter)
for row in rows:
    by_ivp[row["ivp"]][row["status"]] += 1
print("| IVP | variants | " + " | ".join(("ok", "compile_error", "crash", "timeout", "wrong_result")) + " | best s/step | worst s/step |")
print("|---|---|---|---|---|---|---|---|---|")
for ivp, counts in by_ivp.items():
    times = [r["median_s"] for r in rows if r["ivp"] == ivp and r["status"] == "ok"]
    cells = " | ".join(str(counts[s]) for s in ("ok", "compile_error", "crash", "timeout", "wrong_result"))
    print(f"| {ivp} | {sum(counts.values())} | {cells} | {min(times):.3e} | {max(times):.3e} |")
PY
