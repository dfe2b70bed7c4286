"""Kernel effects: how skeleton and kernel variants move a variant's time (hybrid's prior, no model).

Within one configuration, log t_v = level + z_v . b + e_v: z_v the variant's skeleton and kernel
variants (one-hot) and its predicted log time, centred over the pool; b a pool's effects, drawn
from N(mean, cov) as the measured pools' effects spread; e_v ~ N(0, own^2). Each measured variant
tells of every variant that shares its kernels, and the effects carry across IVPs and hosts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from importlib import resources

import numpy as np
import pandas as pd

from hybridtune.learn.encode import kernel_variants

PREDICTED = "log_predicted"      # the last effect: of the offline model's centred log time
SHRINK = 0.2                     # the effects' covariance drawn this far to its diagonal
RIDGE = 1e-4                     # a pool's effects by least squares, this little ridge
MIN_POOLS = 3                    # pools (of 3 or more variants) the spread needs at least
SHIPPED_FILE = "kernel_effects.json"


@dataclass(frozen=True)
class KernelEffects:
    """The effects' names (PREDICTED last), their mean and covariance over `pools` measured pools
    (of the hosts named), and a variant's own error left beside them (log time)."""
    names: tuple
    mean: tuple
    cov: tuple                  # rows
    own: float
    pools: int
    hosts: tuple = ()

    def as_dict(self) -> dict:
        return {**asdict(self), "names": list(self.names), "mean": list(self.mean),
                "cov": [list(row) for row in self.cov], "hosts": list(self.hosts)}

    @classmethod
    def from_dict(cls, data: dict) -> KernelEffects:
        return cls(tuple(data["names"]), tuple(float(v) for v in data["mean"]),
                   tuple(tuple(float(v) for v in row) for row in data["cov"]),
                   float(data["own"]), int(data["pools"]), tuple(data.get("hosts", ())))


def tokens(variant: str, features: dict) -> list[str]:
    """The variant's skeleton and kernel variants as effect names."""
    return [f"skeleton={variant.split('_', 1)[0]}"] + \
        [f"kernel={part}" for part in kernel_variants(variant, features)]


def design(names: tuple, variants: list, feature_rows: list, log_predicted: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """The pool's centred rows z_v over names, and the centred indicators of tokens names lack
    (one column each)."""
    index = {name: i for i, name in enumerate(names)}
    found = [tokens(v, f) for v, f in zip(variants, feature_rows)]
    unknown = sorted({t for ts in found for t in ts if t not in index})
    extra = {t: i for i, t in enumerate(unknown)}
    known, other = np.zeros((len(found), len(names))), np.zeros((len(found), len(unknown)))
    for row, ts in enumerate(found):
        for t in ts:
            if t in index:
                known[row, index[t]] = 1.0
            else:
                other[row, extra[t]] = 1.0
    known[:, index[PREDICTED]] = log_predicted
    return known - known.mean(axis=0), other - other.mean(axis=0) if len(found) else other


def _pool_design(names: tuple, pool: pd.DataFrame) -> np.ndarray:
    return design(names, pool["variant"].tolist(), pool["features"].tolist(),
                  np.log(pool["predicted_s"].to_numpy(float)))[0]


def _fitted(z: np.ndarray, seconds) -> tuple[np.ndarray, np.ndarray]:
    """Effects of centred log times by ridge least squares on the rows z, and what they leave."""
    y = np.log(np.asarray(seconds, float))
    y = y - y.mean()
    width = z.shape[1]
    b = np.linalg.lstsq(np.vstack([z, np.sqrt(RIDGE) * np.eye(width)]),
                        np.concatenate([y, np.zeros(width)]), rcond=None)[0]
    return b, y - z @ b


def pool_effects(names: tuple, pool: pd.DataFrame) -> tuple[np.ndarray, float]:
    """One measured pool's effects (ridge least squares of its centred log times) and the
    variance they leave."""
    b, left = _fitted(_pool_design(names, pool), pool["median_s"])
    return b, float(np.var(left))


def fitted_effects(pools: list[pd.DataFrame], hosts: tuple = (), shrink: float = SHRINK
                   ) -> KernelEffects:
    """The effects' mean and covariance over measured pools (frames of one configuration each:
    variant, features, predicted_s, median_s); the covariance drawn by shrink to its diagonal."""
    pools = [p for p in pools if len(p) >= 3]
    if len(pools) < MIN_POOLS:
        raise ValueError(f"{len(pools)} measured pool(s) of 3 or more variants; the kernel "
                         f"effects need {MIN_POOLS}")
    names = tuple(sorted({t for p in pools for v, f in zip(p["variant"], p["features"])
                          for t in tokens(v, f)})) + (PREDICTED,)
    found = [pool_effects(names, p) for p in pools]
    effects = np.array([b for b, _ in found])
    spread = np.cov(effects.T)
    cov = (1 - shrink) * spread + shrink * np.diag(np.diag(spread))
    return KernelEffects(names, tuple(effects.mean(axis=0)), tuple(map(tuple, cov)),
                         float(np.sqrt(np.mean([left for _, left in found]))), len(pools),
                         tuple(hosts))


def own_between_passes(names: tuple, pools: list[pd.DataFrame]) -> tuple[float, int]:
    """A variant's own error that two timings of it agree on, and the pools it rests on: per
    pool timed in two passes (variant, features, predicted_s, and each pass's time in `one` and
    `two`), the covariance of the residuals each pass leaves about its own effects (timing noise,
    independent between passes, drops out of it), the root of their mean (0 where they cancel)."""
    agreed = []
    for pool in (p for p in pools if len(p) >= 3):
        z = _pool_design(names, pool)
        (_, one), (_, two) = (_fitted(z, pool[column]) for column in ("one", "two"))
        agreed.append(float(np.mean(one * two)))
    return (float(np.sqrt(max(np.mean(agreed), 0.0))) if agreed else float("nan")), len(agreed)


def effects_of(pools: list[pd.DataFrame], hosts: tuple = ()) -> KernelEffects | None:
    """fitted_effects on these pools, or None where fewer than MIN_POOLS have 3 or more variants."""
    enough = sum(len(p) >= 3 for p in pools) >= MIN_POOLS
    return fitted_effects(pools, hosts) if enough else None


def effects_prior(effects: KernelEffects, variants: list, feature_rows: list,
                  log_predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One configuration's mean log time (about its level, the mean predicted), covariance under
    the effects and its rows z over the effects' names; an effect they do not know has mean 0 and
    their mean variance. None where they know none of the pool's kernel variants (another
    method's kernels, say)."""
    z, other = design(effects.names, variants, feature_rows, log_predicted)
    if not z[:, :-1].any():
        return None
    cov = np.asarray(effects.cov)
    unknown = float(np.mean(np.diag(cov)[:-1]))
    mean = log_predicted.mean() + z @ np.asarray(effects.mean)
    return mean, (z @ cov @ z.T + unknown * other @ other.T
                  + effects.own ** 2 * np.eye(len(variants))), z


def shipped() -> KernelEffects | None:
    """The effects fitted on the shipped ground truths (jobs/ship_kernel_effects.py writes them),
    or None where the file is missing."""
    source = resources.files("hybridtune.learn") / SHIPPED_FILE
    if not source.is_file():
        return None
    return KernelEffects.from_dict(json.loads(source.read_text()))
