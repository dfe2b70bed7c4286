#!/usr/bin/env bash
# hybridtune tune under mpiexec (the mpich wheel's, in .venv): ranks are grouped into nodes by
# host name (SLURMD_NODENAME under Slurm), and each node times one variant at a time, so start one
# rank per node. On one machine that is one rank:  jobs/tune.mpirun.sh [-n RANKS] [tune args...]
# Across hosts, give hydra its host list as usual (-hosts a,b or -f HOSTFILE) with -ppn 1.
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=1
if [[ "${1:-}" == "-n" ]]; then RANKS=$2; shift 2; fi
exec .venv/bin/mpiexec -n "$RANKS" .venv/bin/hybridtune tune "$@"
