#!/usr/bin/env bash
# Benchmark of the offline model (issue "Offline model", item 10): predict the A-H pool with Radau IIA(7)
# for the four paper IVPs cold, warm and with a fifth IVP; the Offsite way timed on a sample and
# extrapolated; accuracy against measurements of a pool sample. Probes the host first if
# data/machines/host.yml is missing. Writes data/bench/offline.json.
# Options: --machine REF, --offsite-sample K, --accuracy-variants V, --skip-accuracy, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
[ -f data/machines/host.yml ] || .venv/bin/hybridtune machine probe -o data/machines/host.yml
exec .venv/bin/python jobs/bench_offline.py "$@"
