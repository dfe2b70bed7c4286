#!/usr/bin/env bash
# Benchmark of distributed tuning (emulated nodes under the wheel's mpiexec): throughput on 1 and 2
# nodes, the scheduler's cost per task, and preselect:5 / preselect:10 / run_all on the four paper
# IVPs. Options: --rounds K, --variants V, --repetitions R, --tasks T, --n N, --budget S,
# --skip-strategies. Writes data/bench/distributed.json (and distributed-runall.h5, the ground truth).
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
[[ -f data/machines/host.yml ]] || .venv/bin/hybridtune machine probe -o data/machines/host.yml
exec .venv/bin/python jobs/bench_distributed.py "$@"
