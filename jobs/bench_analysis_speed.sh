#!/usr/bin/env bash
# Benchmark of the kerncraft adapter's speed-ups of OSACA: the default scenario's offline stage,
# cold, with and without them, interleaved (jobs/bench_analysis_speed.py); the predictions must be
# the same. Probes the host first if data/machines/host.yml is missing. Writes
# data/bench/analysis_speed.json.
# Options: --scenario FILE, --rounds R, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
[ -f data/machines/host.yml ] || .venv/bin/hybridtune machine probe -o data/machines/host.yml
exec .venv/bin/python jobs/bench_analysis_speed.py "$@"
