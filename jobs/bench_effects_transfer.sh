#!/usr/bin/env bash
# Kernel effects across the two ground truths (no measuring): hybrid without a model on each, its
# effects from the other's pools, its own or both. Options: --seeds S (default 20), --stop E,
# --own-share S (the share of the effects' own error kept, default 1), --output PATH. Writes
# data/bench/effects_transfer.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_effects_transfer.py "$@"
