#!/usr/bin/env bash
# Benchmark "Generated variants" item 6: best/worst pool variant vs numba, numpy and the streaming bound.
# Writes data/bench/generated.json and prints a markdown table. Options: --quick (every 8th variant),
# --n-small N, --large-factor F, --max-large-ws-mib M, --stream-repeats R, --output PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s install
.venv/bin/python -c "import numba" 2>/dev/null || .venv/bin/python -m pip install --quiet -e '.[bench]'
exec .venv/bin/python jobs/bench_generated.py "$@"
