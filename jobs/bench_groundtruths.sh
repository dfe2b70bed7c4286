#!/usr/bin/env bash
# Benchmark of the two shipped ground truths (no measuring): leave one IVP out on each host (the
# strategy table, the models' accuracy, the IVP feature set), and leave one host and one IVP out
# both ways with the machine feature set. Options: --host-a STORE, --host-b STORE, --noise-seeds S
# (default 20), --host-b-result FILE (host B's evaluate --json output from an earlier run). Writes
# data/bench/groundtruths.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_groundtruths.py "$@"
