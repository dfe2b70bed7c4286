#!/usr/bin/env bash
# Benchmark of the reference states a tuning run's plan computes, one after another against side
# by side (jobs/bench_reference_states.py). Writes data/bench/reference_states.json.
# Options: --scenario PATH, --rounds R, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_reference_states.py "$@"
