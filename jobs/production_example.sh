#!/usr/bin/env bash
# The tuned solver in a user's MPI program (jobs/production_example.c), end to end: Wave1D tuned at
# n = 20000 on 1 and 2 ranks, exported with 3 candidates per range, run adaptive and reporting under
# mpiexec on 1 and 2 ranks and once at a size never measured, each state checked against the
# reference; then `store import`, a retrain and the corrected prediction before and after. Options:
# -n N, --unmeasured N, --steps S, --keep DIR. Writes data/bench/production_example.json; a few
# minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/production_example.py "$@"
