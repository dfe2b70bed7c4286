"""How much of the kernel effects' own error two passes of a variant agree on, per ground truth.

The kernel effects (learn/kernel_effects) leave each variant an own error: the root of the mean
residual variance of the stored times about each pool's effects. A stored time carries its timing
noise, which hybrid's belief counts again for every new timing. Where a store timed a pool's
variants in two passes, the covariance of the residuals the two passes leave holds only what they
agree on (learn/kernel_effects.own_between_passes). Their ratio is the share of the own error that
is not the stored times' timing noise (docs/models.md#the-hybrid-strategy). Writes
data/bench/effects_own.json.
"""

import argparse
import json
import sys

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.learn.kernel_effects import effects_of, own_between_passes
from hybridtune.pipeline.prior_stores import store_passes, store_pools

STORES = ("data/groundtruth/ground-truth.h5", "data/groundtruth/amd-epyc/ground-truth.h5")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", nargs="+", default=list(STORES))
    args = parser.parse_args()
    found, every_pool, every_paired = {}, [], []
    for store in args.stores:
        pools, cpu = store_pools(str(PROJECT_ROOT / store))
        paired = store_passes(str(PROJECT_ROOT / store))
        effects = effects_of(pools)
        if effects is None or not paired:
            print(f"error: {store}: fewer than 3 whole pools, or none timed in two passes",
                  file=sys.stderr)
            return 2
        agreed, count = own_between_passes(effects.names, paired)
        found[store] = {"cpu": cpu, "whole_pools": len(pools), "pools_in_two_passes": count,
                        "variants_in_two_passes": sum(len(p) for p in paired),
                        "own_stored": effects.own, "own_between_passes": agreed,
                        "share": agreed / effects.own}
        every_pool += pools
        every_paired += paired
    together = effects_of(every_pool)
    agreed, count = own_between_passes(together.names, every_paired)
    out = {"stores": found, "together": {"whole_pools": len(every_pool),
                                         "pools_in_two_passes": count,
                                         "own_stored": together.own,
                                         "own_between_passes": agreed,
                                         "share": agreed / together.own},
           "command": "jobs/bench_effects_own.sh"}
    (PROJECT_ROOT / "data" / "bench" / "effects_own.json").write_text(
        json.dumps(out, indent=1) + "\n")
    for store, numbers in [*found.items(), ("both stores", out["together"])]:
        print(f"{store}: own error {numbers['own_stored']:.4f} on the stored times, "
              f"{numbers['own_between_passes']:.4f} agreed between two passes "
              f"({numbers['pools_in_two_passes']} pools): share {numbers['share']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
