#!/usr/bin/env bash
# Benchmark of building variants from one object per kernel against one file per variant: the
# seconds to build a sample of each IVP's variants cold both ways, and the two builds timed
# interleaved beside a copy of the one file (jobs/bench_kernel_objects.py). Writes
# data/bench/kernel_objects.json.
# Options: --scenario FILE, --build-sample K, --time-sample K, --rounds R, --seed S, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_kernel_objects.py "$@"
