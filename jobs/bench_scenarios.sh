#!/usr/bin/env bash
# Benchmark "The space of scenarios": draws scenarios from the shipped library (and files of a user's
# own beside them, and faults) and runs variants, predict --dry-run and tune --dry-run on each
# in-process; counts exit codes and keeps every traceback. Writes data/bench/scenarios.json.
# Options: --count N (default 2000), --seed S, --timeout SECONDS, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_scenarios.py "$@"
