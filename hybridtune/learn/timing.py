"""One rule for a variant's time: first timings, the close contenders' re-timing, the choice.

First timings (one per pass) give the time that training, replay and a ground truth's reference best
use; the close contenders' interleaved re-timing, with their first timing, decides a run's choice.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

FIRST = "alone"                 # a variant timed on its own, in the strategy's order
RETIMED = "interleaved"         # re-timed in turn with the close contenders of its configuration
PRODUCTION = "production"       # timed by a tuned library during a user's run (store import):
                                # combined with the first timings as one more pass
NOT_TUNING_FIRST = (RETIMED, PRODUCTION)    # the rest (alone, or "" in an upgraded store) are
                                            # tuning's own first timings
CLOSE_WITHIN = 0.10             # a contender: first timing within this share of the best's
RACE_MIN = 2                    # racers at least: the leader and its closest contender
RETIME_MAX = 8                  # contenders re-timed per configuration
# The run-to-run noise of one timing, also hybrid's floor for a timing's noise: the robust standard
# deviation (1.4826 MAD) of one timing's log error between two passes of the shipped ground truth,
# paired in store order, each configuration's common shift removed (strategies/noise measures a
# store's own; the value's source: docs/benchmarks.md#constants-set-from-measurements)
TIMING_SPREAD = 0.031
Z95 = 1.959964                  # a normal's two-sided 95% quantile


def own_variance(ci_rel) -> np.ndarray:
    """A timing's own noise variance in log time, from its 95% interval ci_rel (relative
    half-width); 0 where that is unknown (None, NaN, not positive)."""
    ci = np.asarray(np.nan if ci_rel is None else ci_rel, float)
    return np.where(np.isfinite(ci) & (ci > 0), (ci / Z95) ** 2, 0.0)


def mean_of_passes(first: pd.DataFrame, key: list) -> pd.DataFrame:
    """Per key the first timings of one code (the newest generator's) and compiler flags,
    combined: median_s the geometric mean over the passes that timed it, each weighted by its
    precision (1 / (TIMING_SPREAD^2 + (ci_rel / Z95)^2): a pass disturbed enough to widen its own
    interval counts less), the interval spanning theirs, passes their count, row_id the latest
    pass's. The frame is in the store's order, oldest first (store.Store.frame: the order of
    appending, which merges keep in time order); a row id says nothing of time."""
    version = pd.to_numeric(first["generator_version"], errors="coerce").fillna(-1)
    newest = first.assign(_version=version).sort_values("_version", kind="stable") \
        .drop_duplicates(key, keep="last")
    same = first.assign(_order=np.arange(len(first))).merge(
        newest[key + ["code_sha256", "compiler_flags"]], on=key + ["code_sha256", "compiler_flags"])
    same = same.sort_values("_order", kind="stable").drop(columns="_order")
    own = np.nan_to_num(same["ci_rel"].to_numpy(float) / Z95)
    weight = 1.0 / (TIMING_SPREAD ** 2 + own ** 2)
    same = same.assign(_log=np.log(same["median_s"].to_numpy(float)) * weight, _weight=weight)
    groups = same.groupby(key, sort=False)
    combined = groups.agg(_log=("_log", "sum"), _weight=("_weight", "sum"),
                          passes=("row_id", "size"), ci_low_s=("ci_low_s", "min"),
                          ci_high_s=("ci_high_s", "max"))
    combined["_log"] = combined["_log"] / combined.pop("_weight")
    latest = same.drop_duplicates(key, keep="last").set_index(key)
    out = latest.drop(columns=["_log", "_weight", "ci_low_s", "ci_high_s"]).join(combined)
    several = out["passes"] > 1
    out["median_s"] = out["median_s"].where(~several, np.exp(out.pop("_log")))
    half = (out["ci_high_s"] - out["ci_low_s"]) / (2 * out["median_s"])
    out["ci_rel"] = out["ci_rel"].where(~several, half)
    return out.reset_index()


def latest_retimings(retimed: pd.DataFrame, configuration: list) -> pd.DataFrame:
    """The interleaved re-timings of each configuration's latest re-timing run (the frame in the
    store's order, oldest first): re-timings of other runs met other machine loads and are not
    compared with them."""
    if retimed.empty:
        return retimed
    last = retimed.groupby(configuration)["run_id"].transform("last")
    return retimed[retimed["run_id"] == last]


def contenders(first: dict) -> list:
    """The ids to race (id -> (median_s, ci_low_s, ci_high_s) of first timings): the best, those
    within CLOSE_WITHIN of it or whose interval overlaps its, and at least the RACE_MIN - 1 next
    fastest (a lone fast timing is raced too), the best first, at most RETIME_MAX; none where
    fewer than two were timed."""
    ordered = sorted(first, key=lambda i: (first[i][0], str(i)))
    if len(ordered) < 2:
        return []
    best, _, high = first[ordered[0]]
    limit = max(best * (1 + CLOSE_WITHIN), _finite(high, best))
    close = [i for i in ordered if min(first[i][0], _finite(first[i][1], first[i][0])) <= limit]
    return ordered[:max(len(close), RACE_MIN)][:RETIME_MAX]


def _finite(value, otherwise: float) -> float:
    return float(value) if value is not None and math.isfinite(value) else otherwise


def round_decides(first: dict, retimed: dict) -> bool:
    """The re-timing round raced the fastest first timing (id -> seconds in both)."""
    leader = min(first, key=lambda i: (first[i], str(i))) if first else None
    return bool(retimed) and (leader is None or leader in retimed)


def compared(first: dict, retimed: dict) -> dict:
    """The times a run's choice is made among (id -> seconds per step, of first timings and of
    the latest re-timing round): where the round raced the fastest first timing, the round's
    (its interleaved timings are the only ones that met the same machine load; a lucky first
    timing gets no say); else (no round, or one older than a faster first timing) the first
    timings."""
    return dict(retimed) if round_decides(first, retimed) else first


def choose(first: dict, retimed: dict):
    """The variant a run chooses: the fastest of compared(first, retimed); None if none."""
    times = compared(first, retimed)
    return min(times, key=lambda i: (times[i], str(i))) if times else None
