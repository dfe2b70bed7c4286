#!/usr/bin/env bash
# The ground-truth campaign behind `hybridtune evaluate`, `report` and jobs/bench_strategies.sh,
# run directly on one machine (or give HYBRIDTUNE a wrapper such as srun). Resumable: rerunning
# measures only what the store lacks. Run from the project folder:
#   jobs/groundtruth.sh [STORE]            (default data/groundtruth/ground-truth.h5)
# 1. every variant of scenarios/groundtruth.yaml (Radau IIA(7), skeletons A-H, the four paper IVPs
#    and Heat2D, three sizes from L1's edge to L3) with one thread, to ci_rel <= 1%;
# 2. at a memory-regime size (n = 3992004, valid for every IVP; about 0.7 s a step, so about 10 s a
#    variant): a uniform random sample of 20; with 2 threads at the three sizes: a uniform random
#    sample of 10 plus the offline model's top 10 (declared as samples: the whole-pool numbers of
#    evaluate use only step 1's configurations).
set -euo pipefail
cd "$(dirname "$0")/.."
HYBRIDTUNE=${HYBRIDTUNE:-.venv/bin/hybridtune}
STORE=${1:-data/groundtruth/ground-truth.h5}
export HYBRIDTUNE_GROUND_TRUTH_CAMPAIGN=1     # the one writer of data/groundtruth/
TIMING=(--ci 0.01 --budget 1)
mkdir -p "$(dirname "$STORE")"
"$HYBRIDTUNE" tune scenarios/groundtruth.yaml --db "$STORE" "${TIMING[@]}" --head 0
"$HYBRIDTUNE" tune scenarios/groundtruth.yaml --db "$STORE" "${TIMING[@]}" --head 0 \
    -n 3992004 --strategy random:20:1
for strategy in random:10:1 top_k:10; do
    "$HYBRIDTUNE" tune scenarios/groundtruth.yaml --db "$STORE" "${TIMING[@]}" --head 0 \
        --threads 2 --strategy "$strategy"
done
"$HYBRIDTUNE" train --db "$STORE"
