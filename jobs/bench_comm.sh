#!/usr/bin/env bash
# Benchmark of communication between two MPI ranks on this node: ping-pong (Hockney, LogGP),
# allgather, neighbour exchange and barrier over message sizes, --runs times (default 3), each fit
# judged at the sizes held out of it; then the MPI variants of scenarios/mpi.yaml predicted and
# measured on 1 rank x 1 thread, 2 ranks x 1 thread and 1 rank x 2 threads (--pool sample: the
# variants that cover every kernel variant of each skeleton form; --pool all: every variant;
# --skip-variants: messages only). Options: --runs K, --reps R. Writes data/bench/comm.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install data/machines/host.yml    # predictions with the probed machine file, as `make tune` makes it
exec .venv/bin/python jobs/bench_comm.py "$@"
