#!/usr/bin/env bash
# Benchmark of the learned correction and the strategies, from the ground truth (no measuring):
# `hybridtune evaluate` (every strategy replayed, each IVP left out of training in turn), the time
# of `train` and of a corrected `predict` of the whole pool. Options: --db STORE (default
# data/groundtruth/ground-truth.h5), --repeats K, --noise-seeds S (default 20). Writes
# data/bench/strategies.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_strategies.py "$@"
