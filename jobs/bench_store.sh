#!/usr/bin/env bash
# Benchmark of the HDF5 store: bulk appends and reading 40,000 rows, medians of 7 rounds.
# Options: --rows R, --repeats K, --output PATH. Writes data/bench/store.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_store.py "$@"
