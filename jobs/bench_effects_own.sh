#!/usr/bin/env bash
# How much of the kernel effects' own error two passes of a variant agree on
# (jobs/bench_effects_own.py). Writes data/bench/effects_own.json.
# Options: --stores STORE... (default: both ground truths).
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_effects_own.py "$@"
