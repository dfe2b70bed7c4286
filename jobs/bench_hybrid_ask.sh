#!/usr/bin/env bash
# Benchmark of hybrid's asks with and without the joint chance the judge scores
# (jobs/bench_hybrid_ask.py). Writes data/bench/hybrid_ask.json.
# Options: --store PATH, --pools K, --rounds R, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_hybrid_ask.py "$@"
