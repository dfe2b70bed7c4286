#!/usr/bin/env bash
# Benchmark "The offline model", kerncraft forms: each paper IVP's generated RHS against its kerncraft
# form, timed alone, and kerncraft's ECM prediction of the form. Writes data/bench/forms.json and
# prints a markdown table. Options: -n N, --machine FILE (default: host), --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_forms.py "$@"
