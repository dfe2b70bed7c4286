"""A space-filling sample: variants told apart by skeleton and loop orders, taken farthest first, for the stated share of a planned list or of an adaptive search's measurements, every result told to the search."""

from __future__ import annotations

import itertools
import math


from hybridtune.describe.strategy import HYBRID_STOP, parse_strategy
from hybridtune.strategies import replay
from hybridtune.strategies.leave_one_out import whole_pools
from hybridtune.strategies.hybrid import HybridSearch, cover
from hybridtune.strategies.protocol import Candidates
from hybridtune.strategies.registry import search_for
from hybridtune.strategies.sample import (Sampled, distances, farthest, preference, sample_size,
                                          traits)


def _candidates() -> Candidates:
    """Three skeletons, each with two kernels of three loop orders: 27 variants."""
    ids = [f"{s}_RHS_lj_LC_{a}_Update_{b}" for s, a, b in
           itertools.product("ABC", ("lji", "ijl", "jil"), ("ij", "ji", "ii"))]
    return Candidates(tuple(ids), tuple(1.0 + 0.01 * i for i in range(len(ids))))


def test_traits_are_the_skeleton_and_each_kernel_with_its_loop_order():
    assert traits("H_RHS_predictor_lj_LC_lji_RHS_lj_RHS_Approx_Update_ij") == {
        ("skeleton", "H"), ("RHS_predictor", "lj"), ("LC", "lji"), ("RHS", "lj"),
        ("RHS_Approx_Update", "ij")}


def test_farthest_first_spreads_over_skeletons_and_loop_orders():
    found = _candidates()
    distance = distances(found.ids)
    assert distance[0, 0] == 0 and distance[0, 1] == 2 and distance[0, 9] == 2
    picks = farthest(distance, [0], 2, preference(found))
    # each differs from everything before it in skeleton and both loop orders
    for k, pick in enumerate(picks):
        assert all(distance[pick, other] == 6 for other in [0] + picks[:k])
    assert len(set(picks)) == 2 and 0 not in picks


def test_a_planned_strategy_s_sample_follows_its_list():
    found = _candidates()
    plain = search_for(parse_strategy("top_k:4"), found).planned()
    sampled = search_for(parse_strategy("top_k:4+sample:0.5"), found).planned()
    assert sampled[:4] == plain and len(sampled) == 4 + sample_size(4, 0.5) == 8
    assert len(set(sampled)) == 8
    assert sample_size(10, 0.2) == 3 and sample_size(7, 0.0) == 0


def test_an_adaptive_search_spends_its_share_on_the_sample_and_learns_from_it(fixture_rows):
    pool = whole_pools(fixture_rows)[0]
    size = len(pool.frame)
    belief, _ = replay.hybrid_prior([pool], None)
    search = Sampled(HybridSearch(belief, size, HYBRID_STOP, size, 0, cover(
        pool.frame["variant"].tolist(), pool.frame["predicted_s"].tolist())),
        replay.in_rows(pool), 0.3)
    result = replay.drive(pool, search, list(range(size)))
    assert search.ended_by.endswith("space-filling sample")
    assert search.sampled == math.floor(0.3 * len(result.order))
    assert len(set(result.order)) == len(result.order) and result.chosen in result.order
    # the belief was told every result, the sample's too
    assert set(search.inner.belief.observed) == set(result.order)
    assert replay.hybrid(pool, None, sample=0.3).order == result.order


def _drive(search, seconds=lambda pick: 1.0 + 0.01 * pick) -> list:
    """Ask one at a time until the search ends, telling each pick its time; the picks."""
    asked = []
    while not search.ended_by:
        picks = search.ask(1)
        if not picks:
            break
        asked += picks
        search.tell(picks[0], seconds(picks[0]))
    return asked


def test_a_sampled_search_tells_its_search_every_result():
    found = _candidates()
    inner = search_for(parse_strategy("top_k:3"), found)
    search = Sampled(inner, found, 0.5)
    asked = _drive(search, lambda pick: 1.0)
    assert len(asked) == 6 and asked[:1] == [0]
    assert search.sampled == 3 and set(inner.order) <= set(asked)
    assert "space-filling sample" in search.ended_by




def test_a_sample_comes_on_top_of_k_and_of_max_measurements_as_the_dry_run_says(fixture_rows):
    import pytest
    pytest.importorskip("optuna")
    pool = whole_pools(fixture_rows)[0]
    size = len(pool.frame)
    search = search_for(parse_strategy("tpe:6:1+sample:0.5"), replay.candidates(pool)[0])
    asked = _drive(search)
    assert len(search.inner.picked) == 6 and search.sampled == sample_size(6, 0.5)
    assert len(asked) == 6 + sample_size(6, 0.5)
    belief, _ = replay.hybrid_prior([pool], None)
    # a stop that never comes: only --max-measurements 5 ends hybrid's own picks
    hybrid = Sampled(HybridSearch(belief, size, 0.0, 5, 0), replay.in_rows(pool), 0.5)
    asked = replay.drive(pool, hybrid, list(range(size))).order
    assert len(hybrid.inner.own) == 5 and hybrid.inner.ended_by == "--max-measurements 5"
    assert len(asked) == 5 + hybrid.sampled and hybrid.sampled == sample_size(5, 0.5)
