#!/usr/bin/env bash
# The adaptive tuned library (export --tuned --candidates 3) on the default scenario's
# configurations at n = 600000, from make tune's store: the variant it keeps against a separate
# five-round interleaved re-timing of its candidates (within 2% of the best, or tied), and its
# overhead against the same library fixed to that variant in 2000-step runs, alternated (below 1%).
# Options: --db STORE, -n N, --threads T, --steps S, --candidates K, --pairs P. Writes
# data/bench/adaptive.json; about 10 minutes on 2 cores. Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/bench_adaptive.py "$@"
