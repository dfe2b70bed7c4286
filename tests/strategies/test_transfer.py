"""Orders from other configurations: other IVPs' pools matched by method, layout and size, the IVP's own nearest other size, the counts to within the best and the level's place among the other IVPs'."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hybridtune.strategies import transfer
from hybridtune.strategies.replay import StoredPool
from hybridtune.learn.table import POOL_MEDIAN


def _pool(ivp: str, n: int, times: dict, threads: int = 1, predicted: float = 1.0,
          ranks: int = 1) -> StoredPool:
    frame = pd.DataFrame({"variant": list(times), "median_s": list(times.values()),
                          "predicted_s": [predicted] * len(times),
                          "features": [{POOL_MEDIAN: predicted, "predicted_s": predicted}]
                          * len(times)})
    return StoredPool(("m", ivp, n, ranks, threads), frame)


def test_counterparts_are_the_other_ivps_nearest_pool_of_the_same_threads():
    mine = _pool("A", 600, {"x": 1.0})
    pools = [mine, _pool("A", 6000, {"x": 1.0}), _pool("B", 625, {"x": 1.0}),
             _pool("B", 6084, {"x": 1.0}), _pool("C", 60000, {"x": 1.0}),
             _pool("D", 600, {"x": 1.0}, threads=2), _pool("E", 600, {"x": 1.0}, ranks=2)]
    found = transfer.counterparts(mine, pools)
    # A is the IVP itself, C's nearest is a hundredfold off, D has other threads, E other ranks
    assert [p.key for p in found] == [("m", "B", 625, 1, 1)]


def test_orders_counts_and_hindsight():
    # the left-out IVP: v3 best, v1 within 1%, v2 within 5%
    mine = _pool("A", 600, {"v0": 2.0, "v1": 1.005, "v2": 1.04, "v3": 1.0})
    b = _pool("B", 600, {"v0": 1.0, "v1": 3.0, "v2": 1.1, "v3": 2.0})
    c = _pool("C", 600, {"v0": 1.2, "v1": 1.0, "v2": 5.0, "v3": 1.5})
    found = transfer.configuration_transfer(mine, [mine, b, c], first_within=0.05,
                                          loss_within=0.01)
    # mean log(t / t_best): v0 (0 + 0.18) / 2, v1 (1.10 + 0) / 2, v2 (0.10 + 1.61) / 2, v3 (0.69 + 0.41) / 2
    assert transfer.transfer_orders(mine, [b, c])[transfer.MEAN] == [(0, 3, 1, 2)]
    assert found[transfer.MEAN] == {"first_within": False, "to_within": 2}
    # B's order v0 v2 v3 v1: its first is 2x off, v3 third; C's v1 v0 v3 v2: within at once
    assert found[transfer.BEST_OTHER] == {"first_within": True, "to_within": 1}


def test_a_variant_no_other_ivp_measured_comes_last():
    mine = _pool("A", 600, {"new": 0.5, "v0": 1.0, "v1": 2.0})
    other = _pool("B", 600, {"v0": 1.0, "v1": 1.5})
    assert transfer.transfer_orders(mine, [other])[transfer.MEAN] == [(1, 2, 0)]


def test_the_level_against_the_other_ivps_levels():
    # levels log(t / median prediction): A log 0.5, B log 1, C log 2 (median of each pool)
    mine = _pool("A", 600, {"v0": 0.5, "v1": 0.5, "v2": 0.6})
    b = _pool("B", 600, {"v0": 1.0, "v1": 0.9, "v2": 1.1})
    c = _pool("C", 600, {"v0": 2.0, "v1": 2.0, "v2": 3.0})
    level = transfer.configuration_transfer(mine, [mine, b, c], 0.05, 0.01)["level"]
    assert level["own"] == pytest.approx(math.log(0.5))
    assert (level["others_low"], level["others_high"]) == pytest.approx((0.0, math.log(2)))
    assert level["outside"] and level["others"] == ["B", "C"]
    inside = transfer.configuration_transfer(b, [mine, b, c], 0.05, 0.01)["level"]
    assert not inside["outside"]


def test_without_another_ivp_nothing_and_the_summary_skips_it():
    mine = _pool("A", 600, {"v0": 1.0, "v1": 1.2})
    other = _pool("B", 600, {"v0": 1.0, "v1": 1.3})
    assert transfer.configuration_transfer(mine, [mine], 0.05, 0.01) is None
    known = transfer.configuration_transfer(mine, [mine, other], 0.05, 0.01)
    summary = transfer.summary([known, None])
    assert summary["configurations"] == 1
    assert summary[transfer.MEAN] == {"first_within_5pct": 1.0, "to_within_3pct_mean": 1.0,
                                      "configurations": 1}
    assert transfer.OWN_SIZE not in known and transfer.OWN_SIZE not in summary
    assert transfer.summary([None]) == {}


def test_the_ivps_own_nearest_other_size_of_the_same_threads():
    mine = _pool("A", 6000, {"v0": 1.0, "v1": 1.3, "v2": 1.02})
    small = _pool("A", 600, {"v0": 2.0, "v1": 1.0, "v2": 1.5})
    large = _pool("A", 600000, {"v0": 1.0, "v1": 2.0, "v2": 3.0})
    two = _pool("A", 6000, {"v0": 1.0, "v1": 2.0, "v2": 3.0}, threads=2)
    other = _pool("B", 6000, {"v0": 1.0, "v1": 2.0, "v2": 3.0})
    pools = [mine, small, large, two, other]
    assert transfer.own_other_size(mine, pools) is small      # tenfold off, not a hundredfold
    assert transfer.own_other_size(two, pools) is None
    found = transfer.configuration_transfer(mine, pools, 0.05, 0.01)
    # at 600: v1 v2 v0, so the first is 30% off and the best (v0) comes third
    assert found[transfer.OWN_SIZE] == {"first_within": False, "to_within": 3}
    assert found[transfer.MEAN] == {"first_within": True, "to_within": 1}
