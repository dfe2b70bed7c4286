#!/usr/bin/env bash
# Benchmark "The offline model", kerncraft forms: each paper IVP's generated RHS against its kerncraft
# form, timed alone, and kerncraft's ECM prediction of the form. Writes data/bench/forms.json and
# prints a markdown table. Probes the host first if data/machines/host.yml is missing.
# Options: -n N, --machine FILE (default: host), --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
[ -f data/machines/host.yml ] || .venv/bin/hybridtune machine probe -o data/machines/host.yml
exec .venv/bin/python jobs/bench_forms.py "$@"
