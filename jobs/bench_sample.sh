#!/usr/bin/env bash
# Benchmark of a space-filling share of the training runs' measurements, from the ground truth
# (no measuring): `hybridtune evaluate --sample-shares`. Options: --db STORE, --shares S,S,...
# (default 0,0.25,0.5), --noise-seeds S (default 3). Writes data/bench/sample.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_sample.py "$@"
