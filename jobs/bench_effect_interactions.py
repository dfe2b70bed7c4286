"""Whether pairs of kernel variants explain what the additive kernel effects leave, per whole pool.

Per whole pool of the ground truths, the 5-fold cross-validated root mean squared error in log
time of the additive model (skeleton and kernel variants one-hot, and the offline model's log
time; learn/kernel_effects) against the same with every pair of traits that 3 or more of the pool's
variants share (ridge, its weight the best of four); and how many variants lie within 3, 5, 10 and
15% of the pool's best, the variants a stop 3% below the best held cannot rule out without
measuring them where each one's own error is as large as that residual. Writes
data/bench/effect_interactions.json.
"""

import argparse
import itertools
import json
import statistics
import sys

import numpy as np

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.learn.kernel_effects import tokens
from hybridtune.pipeline.prior_stores import store_pools

STORES = ("data/groundtruth/ground-truth.h5", "data/groundtruth/amd-epyc/ground-truth.h5")
RIDGES = (1e-2, 1e-1, 1.0, 3.0)
WITHIN = (0.03, 0.05, 0.10, 0.15)


def cross_validated(x: np.ndarray, y: np.ndarray, ridge: float, folds: int = 5) -> float:
    """The root mean squared error of ridge regression over seeded folds."""
    order = np.random.default_rng(0).permutation(len(y))
    errors = []
    for held in np.array_split(order, folds):
        kept = np.setdiff1d(order, held)
        centre, level = x[kept].mean(axis=0), y[kept].mean()
        a = x[kept] - centre
        b = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ (y[kept] - level))
        errors += list(y[held] - level - (x[held] - centre) @ b)
    return float(np.sqrt(np.mean(np.square(errors))))


def pool_figures(pool) -> dict:
    """One whole pool's two errors and its variants near the best."""
    found = [tokens(v, f) for v, f in zip(pool["variant"], pool["features"])]
    names = sorted({t for ts in found for t in ts})
    x = np.array([[t in ts for t in names] for ts in found], float)
    y = np.log(pool["median_s"].to_numpy(float))
    additive = np.column_stack([x, np.log(pool["predicted_s"].to_numpy(float))])
    pairs = [(i, j) for i, j in itertools.combinations(range(len(names)), 2)
             if 3 <= (x[:, i] * x[:, j]).sum() < len(y) - 2]
    paired = np.column_stack([additive] + [x[:, i] * x[:, j] for i, j in pairs])
    ratio = np.exp(y - y.min())
    return {"ivp": str(pool["ivp"].iloc[0]), "n": int(pool["n"].iloc[0]), "variants": len(y),
            "pairs": len(pairs), "additive_cv": cross_validated(additive, y, 1e-3),
            "pairs_cv": min(cross_validated(paired, y, r) for r in RIDGES),
            "within": {f"{w:g}": int((ratio <= 1 + w).sum()) for w in WITHIN}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", nargs="+", default=list(STORES))
    parser.add_argument("--output", default="data/bench/effect_interactions.json")
    args = parser.parse_args()
    out = {}
    for path in args.stores:
        pools, cpu = store_pools(str(PROJECT_ROOT / path))
        if not pools:
            print(f"error: {path}: no whole pool", file=sys.stderr)
            return 2
        figures = [pool_figures(pool) for pool in pools]
        summary = {"median_additive_cv": statistics.median(f["additive_cv"] for f in figures),
                   "median_pairs_cv": statistics.median(f["pairs_cv"] for f in figures),
                   "pairs_better": sum(f["pairs_cv"] < f["additive_cv"] for f in figures),
                   "mean_within": {k: statistics.mean(f["within"][k] for f in figures)
                                   for k in figures[0]["within"]}}
        out[path] = {"cpu": cpu, "pools": figures, **summary}
        print(f"{cpu}: {len(figures)} pools; cross-validated error in log time, median: additive "
              f"{summary['median_additive_cv']:.4f}, with pairs {summary['median_pairs_cv']:.4f} "
              f"(lower in {summary['pairs_better']}); variants within 3/5/10/15% of the best, "
              f"mean: {', '.join(f'{v:.1f}' for v in summary['mean_within'].values())}")
    (PROJECT_ROOT / args.output).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
