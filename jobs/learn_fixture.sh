#!/usr/bin/env bash
# Makes the learning tests' fixture store, tests/data/learn/fixture.h5: every variant of
# tests/data/learn/learn.scenario.yaml measured on this host (short budget), with the predictions
# and their feature rows; kernel predictions are kept for one thread only (the scenario's), which
# keeps the file small. Run from the project folder: jobs/learn_fixture.sh
# With --predictions-only the fixture's measurements stay and only its predictions are brought up to
# the current offline model (`hybridtune predict` on a copy: new rankings where the model changed).
set -euo pipefail
cd "$(dirname "$0")/.."
HYBRIDTUNE=${HYBRIDTUNE:-.venv/bin/hybridtune}
PYTHON=${PYTHON:-.venv/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ "${1:-}" = "--predictions-only" ]; then
    cp tests/data/learn/fixture.h5 "$WORK/full.h5"
    "$HYBRIDTUNE" predict tests/data/learn/learn.scenario.yaml --db "$WORK/full.h5" --head 1
else
    "$HYBRIDTUNE" tune tests/data/learn/learn.scenario.yaml --db "$WORK/full.h5" --ci 0.02 --budget 0.2
fi
"$PYTHON" - "$WORK/full.h5" "$WORK/fixture.h5" <<'PY'
import sys
from hybridtune.store import TABLES, Store
with Store.open(sys.argv[1], "r") as full:
    frames = {name: full.frame(name) for name in TABLES}
kernel = frames["kernel_predictions"]
frames["kernel_predictions"] = kernel[kernel["threads"] == 1]
runs = frames.pop("runs")
with Store.open(sys.argv[2], "a", run=runs.iloc[0].to_dict()) as slim:
    for name, frame in frames.items():
        slim.append_many(name, frame.drop(columns="run_id").to_dict("records"))
PY
mv "$WORK/fixture.h5" tests/data/learn/fixture.h5
ls -l tests/data/learn/fixture.h5
