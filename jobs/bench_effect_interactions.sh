#!/usr/bin/env bash
# Whether pairs of kernel variants explain what the additive kernel effects leave, per whole pool
# of the ground truths (jobs/bench_effect_interactions.py). Writes
# data/bench/effect_interactions.json. Options: --stores PATH..., --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_effect_interactions.py "$@"
