"""Kernel effects across hosts: hybrid without a model on each ground truth, its effects from the other's pools, its own or both.

The same replay `hybridtune evaluate --other-host` adds (JSON hosts.kernel_effects), without the
Gaussian processes' transfer beside it. Writes data/bench/effects_transfer.json.
"""

import argparse
import json
import sys
import time

from threadpoolctl import threadpool_limits

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.measure.provenance import cpu_model
from hybridtune.pipeline.evaluation_run import read_host
from hybridtune.strategies.effects_transfer import effects_transfer

STORES = ("data/groundtruth/ground-truth.h5", "data/groundtruth/amd-epyc/ground-truth.h5")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    a, b = (read_host(str(PROJECT_ROOT / store), args.seeds) for store in STORES)
    with threadpool_limits(1, user_api="blas"):
        directions = effects_transfer(a["host"], b["host"], a["noise"], b["noise"], args.seeds,
                                      HYBRID_STOP)
    out = {"command": f"jobs/bench_effects_transfer.sh --seeds {args.seeds}", "host": cpu_model(),
           "stores": list(STORES), "seconds": round(time.perf_counter() - start, 1),
           "directions": directions}
    path = PROJECT_ROOT / "data" / "bench" / "effects_transfer.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    for d in directions:
        print(f"{d['from']} -> {d['to']}: " + "; ".join(
            f"{name} {d[name]['measured_mean']:.1f} measured, {d[name]['loss_pct_mean']:.2f}% lost"
            for name in ("transferred", "own", "both")) + f"; ratio {d['ratio_to_own']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
