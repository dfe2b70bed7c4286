#!/usr/bin/env bash
# Benchmark of point-to-point messages between two MPI ranks on this node: ping-pong over message
# sizes 0 B .. 4 MiB, repeated --runs times (default 3) interleaved, and Hockney's model fitted to
# each run's medians, judged at the sizes held out of the fit. Options: --runs K, --reps R.
# Writes data/bench/comm.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_comm.py "$@"
