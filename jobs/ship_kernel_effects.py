"""Fit the kernel effects on the shipped ground truths' whole pools and write them into the package.

hybrid's prior without a model (learn/kernel_effects); tests/learn/test_kernel_effects.py checks that
the shipped file is what these stores give. Options: --stores STORE... (default: both ground truths).
"""

import argparse
import json
import sys

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.learn.kernel_effects import SHIPPED_FILE
from hybridtune.pipeline.prior_stores import stores_kernel_effects

STORES = ("data/groundtruth/ground-truth.h5", "data/groundtruth/amd-epyc/ground-truth.h5")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", nargs="+", default=list(STORES))
    args = parser.parse_args()
    effects = stores_kernel_effects([str(PROJECT_ROOT / s) for s in args.stores])
    if effects is None:
        print(f"error: {', '.join(args.stores)}: fewer than 3 whole pools", file=sys.stderr)
        return 2
    out = PROJECT_ROOT / "hybridtune" / "learn" / SHIPPED_FILE
    out.write_text(json.dumps({"stores": list(args.stores), **effects.as_dict()}, indent=1) + "\n")
    print(f"{out}: {len(effects.names)} effects from {effects.pools} pools of "
          f"{', '.join(effects.hosts)}; own error {effects.own:.4f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
