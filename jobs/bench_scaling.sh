#!/usr/bin/env bash
# Validation of the scaling predictions beyond this machine (SimGrid SMPI, Extra-P): analytic
# communication against SMPI's on the platforms in data/platforms up to --ranks-max (default 64)
# ranks, 2 simulated ranks against 2 real ones, PMNF leading terms against Extra-P's, one
# 256-rank simulation (--parts picks some: platforms,two_ranks,pmnf,big). Writes
# data/bench/scaling.json.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install extrap data/machines/host.yml
exec .venv/bin/python jobs/bench_scaling.py "$@"
