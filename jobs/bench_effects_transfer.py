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
    parser.add_argument("--stop", type=float, default=HYBRID_STOP,
                        help=f"hybrid's stop E (default {HYBRID_STOP})")
    parser.add_argument("--own-share", type=float, default=1.0,
                        help="the share of the effects' own error the prior keeps (default 1)")
    parser.add_argument("--output", default="data/bench/effects_transfer.json")
    args = parser.parse_args()
    if not 0 < args.own_share <= 1:
        print(f"error: --own-share {args.own_share}: expected a share in (0, 1]", file=sys.stderr)
        return 2
    start = time.perf_counter()
    a, b = (read_host(str(PROJECT_ROOT / store), args.seeds) for store in STORES)
    with threadpool_limits(1, user_api="blas"):
        directions = effects_transfer(a["host"], b["host"], a["noise"], b["noise"], args.seeds,
                                      args.stop, args.own_share)
    options = (f" --stop {args.stop:g}" if args.stop != HYBRID_STOP else "") + \
        (f" --own-share {args.own_share:g}" if args.own_share != 1 else "") + \
        (f" --output {args.output}" if args.output != "data/bench/effects_transfer.json" else "")
    out = {"command": f"jobs/bench_effects_transfer.sh --seeds {args.seeds}{options}",
           "host": cpu_model(), "stop": args.stop, "own_share": args.own_share,
           "stores": list(STORES), "seconds": round(time.perf_counter() - start, 1),
           "directions": directions}
    path = PROJECT_ROOT / args.output
    path.write_text(json.dumps(out, indent=1) + "\n")
    for d in directions:
        print(f"{d['from']} -> {d['to']}: " + "; ".join(
            f"{name} {d[name]['measured_mean']:.1f} measured, {d[name]['loss_pct_mean']:.2f}% lost"
            for name in ("transferred", "own", "both")) + f"; ratio {d['ratio_to_own']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
