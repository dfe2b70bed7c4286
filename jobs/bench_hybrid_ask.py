"""Benchmark of hybrid's asks with and without the joint chance the judge scores.

A live search stops on the expected count alone and skips the 512 joint draws behind each
decision's chance (strategies/hybrid.HybridSearch, scored=False); a replayed one keeps them. Both
searches run over a ground truth's whole pools on the kernel effects (as `make tune` on a new host),
each told the pool's measured times, in interleaved rounds; the seconds spent asking and the asks.
Writes data/bench/hybrid_ask.json.
"""

import argparse
import json
import statistics
import sys
import time

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.learn.prior import prior_belief
from hybridtune.pipeline.prior_stores import store_pools
from hybridtune.strategies.hybrid import HybridSearch, first_cover
from hybridtune.measure.provenance import hardware_identity


def asked(pool, scored: bool) -> tuple[float, int, list]:
    """Seconds spent asking, the asks, and the order of one search over the pool."""
    variants = pool["variant"].tolist()
    belief, _ = prior_belief(None, variants, pool["features"].tolist(), pool["predicted_s"])
    search = HybridSearch(belief, len(pool), HYBRID_STOP, len(pool), 0,
                          first_cover(variants, belief, 0), 0, scored=scored)
    times = pool["median_s"].to_numpy(float)
    spent, asks, order = 0.0, 0, []
    while True:
        started = time.perf_counter()
        picks = search.ask(1)
        spent += time.perf_counter() - started
        asks += 1
        if not picks:
            return spent, asks, order
        order += picks
        search.tell(picks[0], float(times[picks[0]]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="data/groundtruth/amd-epyc/ground-truth.h5")
    parser.add_argument("--pools", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default="data/bench/hybrid_ask.json")
    args = parser.parse_args()
    pools, cpu = store_pools(str(PROJECT_ROOT / args.store))
    pools = pools[:args.pools]
    if not pools:
        print(f"error: {args.store}: no whole pool", file=sys.stderr)
        return 2
    rounds = {"scored": [], "live": []}
    for _ in range(args.rounds):
        for name, scored in (("scored", True), ("live", False)):
            found = [asked(pool, scored) for pool in pools]
            rounds[name].append({"seconds": sum(f[0] for f in found),
                                 "asks": sum(f[1] for f in found),
                                 "orders": [f[2] for f in found]})
    same = all(a["orders"] == b["orders"] for a, b in zip(rounds["scored"], rounds["live"]))
    medians = {name: statistics.median(r["seconds"] for r in found)
               for name, found in rounds.items()}
    out = {"store": args.store, "store_cpu": cpu, "host": hardware_identity()["hardware"],
           "pools": len(pools),
           "rounds": {name: [{k: v for k, v in r.items() if k != "orders"} for r in found]
                      for name, found in rounds.items()},
           "median_s": medians, "ratio_live_to_scored": medians["live"] / medians["scored"],
           "same_orders": same}
    (PROJECT_ROOT / args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"asks over {len(pools)} pools, median of {args.rounds} interleaved rounds: scored "
          f"{medians['scored']:.2f} s, live {medians['live']:.2f} s "
          f"({medians['live'] / medians['scored']:.2f}x); same orders: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
