#!/usr/bin/env bash
# Hybrid live on this host, which has no model for its hardware: per IVP of the default scenario
# (n = 6000, one thread) its choice against strong variants (its own fastest and a random
# sample's) re-timed in alternating rounds. Options: --ivp NAME (repeatable), -n N, --budget S,
# --sample K. Writes data/bench/hybrid_host.json. About 5 minutes per IVP on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/check_hybrid_host.py "$@"
