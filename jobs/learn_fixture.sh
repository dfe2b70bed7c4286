#!/usr/bin/env bash
# Makes the learning tests' fixture store, tests/data/learn/fixture.h5: every variant of
# tests/data/learn/learn.scenario.yaml measured on this host (short budget), with the predictions
# and their feature rows; kernel predictions are kept for one thread only (the scenario's), which
# keeps the file small. Run from the project folder: jobs/learn_fixture.sh
# FIXTURE=methods makes the several-methods tests' store, tests/data/methods/fixture.h5, from
# tests/data/methods/two-methods.scenario.yaml the same way.
# With --predictions-only the fixture's measurements stay and only its predictions are brought up to
# the current offline model (`hybridtune predict` on a copy: new rankings where the model changed).
set -euo pipefail
cd "$(dirname "$0")/.."
HYBRIDTUNE=${HYBRIDTUNE:-.venv/bin/hybridtune}
PYTHON=${PYTHON:-.venv/bin/python}
FIXTURE=${FIXTURE:-learn}
case "$FIXTURE" in
    learn) SCENARIO=tests/data/learn/learn.scenario.yaml ;;
    methods) SCENARIO=tests/data/methods/two-methods.scenario.yaml ;;
    *) echo "FIXTURE: learn or methods (got '$FIXTURE')" >&2; exit 2 ;;
esac
OUT=tests/data/$FIXTURE/fixture.h5
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ "${1:-}" = "--predictions-only" ]; then
    cp "$OUT" "$WORK/full.h5"
    "$HYBRIDTUNE" predict "$SCENARIO" --db "$WORK/full.h5" --head 1
else
    "$HYBRIDTUNE" tune "$SCENARIO" --db "$WORK/full.h5" --strategy run_all --ci 0.02 --budget 0.2
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
mv "$WORK/fixture.h5" "$OUT"
ls -l "$OUT"
