#!/usr/bin/env bash
# Every choice of `make tune` (the default scenario at n = 6000, one thread) against a five-round
# interleaved re-timing of it with the ten fastest first timings: within 2% of the fastest, or the
# fastest named as tied. Options: -n N, --budget S. Writes data/bench/choice_check.json. Run it on
# a quiet machine: about 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
exec .venv/bin/python jobs/check_choice.py "$@"
