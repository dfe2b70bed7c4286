"""The hybrid search: with a model or without it covers every skeleton before it may stop; k picks at once by the constant liar; its stop decisions scored against what the pool held."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hybridtune.learn.belief import Belief
from hybridtune.learn.prior import prior_belief
from hybridtune.strategies import calibration, replay
from hybridtune.strategies.leave_one_out import whole_pools
from hybridtune.strategies.hybrid import Decision, HybridSearch, cover, first_cover


def _pool(fixture_rows, key=("radauIIA7", "Cusp", 6000, 1, 1)):
    return next(p for p in whole_pools(fixture_rows) if p.key == key)


def test_without_a_model_a_pool_whose_offline_best_is_far_off_is_not_ended_after_one(fixture_rows):
    pool = _pool(fixture_rows)
    frame = pool.frame.copy()
    # the fixture's variants are of skeleton F: spread them over four skeletons by name
    frame["variant"] = [f"{'ABCD'[i % 4]}_{v.split('_', 1)[1]}_{i}"
                        for i, v in enumerate(frame["variant"])]
    predicted = frame["predicted_s"].to_numpy(float)
    skeletons = frame["variant"].str.split("_").str[0]
    first = int(np.argmin(predicted))
    # the truly best: the best predicted variant of another skeleton; the offline top 1.8x slower
    other = next(i for i in cover(frame["variant"].tolist(), predicted.tolist())
                 if skeletons[i] != skeletons[first])
    times = np.full(len(frame), 2.0) * frame["median_s"].min()
    times[other] = frame["median_s"].min()
    times[first] = 1.8 * times[other]
    frame["median_s"] = times
    wrong = replay.StoredPool(pool.key, frame)
    # the offline model's prior (no kernel effects) starts from its best and covers the skeletons
    offline = replay.hybrid_prior([wrong], None, effects=None)
    result = replay.hybrid_together([wrong], None, prior=offline)[0]
    covered = set(cover(frame["variant"].tolist(), predicted.tolist()))
    assert len(covered) == skeletons.nunique() > 1
    assert result.order[0] == first and len(result.order) >= len(covered) > 1
    assert covered <= set(result.order) and result.chosen == other
    # so does the default prior without a model, the shipped kernel effects
    result = replay.hybrid(wrong, None)
    measured = {frame["variant"].iloc[i].split("_")[0] for i in result.order}
    assert measured == set(skeletons) and result.chosen == other


def test_a_confident_belief_still_measures_the_best_expected_variant_of_each_skeleton():
    # a belief as sure as a trained model that skeleton B is 50% slower: without the cover the
    # search stops among A's variants; B's best expected variant is in truth the fastest
    variants = [f"{skeleton}_{i}" for skeleton in "AB" for i in range(10)]
    log_mean = np.log([1.0 + 0.01 * i for i in range(10)] + [1.5 + 0.01 * i for i in range(10)])
    cov = 0.05 ** 2 + 0.01 ** 2 * np.eye(20)
    truth = dict(enumerate(np.exp(log_mean)))
    truth[10] = 0.8
    covered = first_cover(variants, Belief(log_mean, cov, {}), 0)
    assert covered == [0, 10]
    told = []
    for cover_positions in (covered, ()):
        search = HybridSearch(Belief(log_mean, cov, {}), 20, 0.25, 20, 0, cover_positions)
        order = []
        while (asked := search.ask(1)):
            order += asked
            search.tell(asked[0], float(truth[asked[0]]))
        told.append(order)
    with_cover, without = told
    assert 10 not in without and len(without) < 5
    assert 10 in with_cover and min(with_cover, key=truth.get) == 10


def test_k_picks_at_once_by_the_constant_liar_leave_the_belief_as_it_was(fixture_rows):
    frame = _pool(fixture_rows).frame
    belief, _ = prior_belief(None, frame["variant"].tolist(), frame["features"].tolist(),
                             frame["predicted_s"])
    search = HybridSearch(belief, len(frame), 0.5, len(frame))
    first = search.ask(1)
    search.tell(first[0], float(frame["median_s"].iloc[first[0]]))
    before = dict(belief.observed)
    batch = search.ask(4)
    assert len(set(batch)) == 4 and first[0] not in batch
    assert belief.observed == before and search.busy == set(batch)
    # the first of a batch is the single pick; the rest follow as if it had measured the best held
    alone = HybridSearch(replay.hybrid_prior([_pool(fixture_rows)], None)[0], len(frame), 0.5,
                         len(frame))
    alone.tell(first[0], float(frame["median_s"].iloc[first[0]]))
    assert alone.ask(1) == batch[:1]


def test_decisions_are_scored_against_what_the_pool_held():
    times = np.array([1.0, 0.9, 0.88, np.nan])
    order = (0, 1, 3, 2)
    decisions = [Decision(0.8, 2.0, 0, 1), Decision(0.3, 0.5, 0, 2), Decision(0.2, 0.2, 0, 3),
                 Decision(0.1, 0.1, 0, 4)]
    # row 0 measured: row 2 (0.88) unmeasured and 3% faster; rows 0 and 1 measured, row 0 still
    # held best: row 2 is not 3% faster than row 1 (0.9), what a stop there keeps; row 3 failed
    # (NaN) counts as neither; all measured: no decision to score
    assert calibration.outcomes(times, order, decisions) == [(0.8, True), (0.3, False),
                                                             (0.2, False)]


def test_the_reliability_table_merges_thin_bins_and_scores_against_a_constant():
    pairs = [(0.05, False)] * 40 + [(0.15, True)] * 5 + [(0.95, True)] * 31 + [(0.92, False)] * 4
    table = calibration.reliability(pairs)
    bins = table["bins"]
    assert [b["decisions"] for b in bins] == [40, 40] and sum(b["decisions"] for b in bins) == 80
    assert bins[0]["low"] == 0 and bins[0]["high"] == pytest.approx(0.1)
    assert bins[1]["low"] == pytest.approx(0.1) and bins[1]["high"] == 1
    assert table["observed_frequency"] == pytest.approx(36 / 80)
    assert table["brier_skill"] > 0.5
    assert calibration.reliability([(0.9, False)] * 30 + [(0.1, True)] * 30)["brier_skill"] < 0
    assert calibration.reliability([]) == {}


def test_upcoming_answers_what_ask_would_and_leaves_the_search_as_it_was(fixture_rows):
    frame = _pool(fixture_rows).frame

    def search():
        belief, _ = prior_belief(None, frame["variant"].tolist(), frame["features"].tolist(),
                                 frame["predicted_s"])
        return HybridSearch(belief, len(frame), 0.5, len(frame))

    looked, plain = search(), search()
    first = looked.ask(1)
    assert plain.ask(1) == first
    state = (set(looked.busy), set(looked.own), list(looked.decisions), dict(looked.belief.observed))
    ahead = looked.upcoming(2)
    assert len(set(ahead)) == 2 and first[0] not in ahead and looked.upcoming(0) == []
    assert (looked.busy, looked.own, looked.decisions, looked.belief.observed) == state
    assert plain.ask(2) == ahead            # what the search asks next, had it asked
    looked.tell(first[0], float(frame["median_s"].iloc[first[0]]))
    again = search()
    again.ask(1)
    again.tell(first[0], float(frame["median_s"].iloc[first[0]]))
    assert looked.ask(3) == again.ask(3)    # and later asks as if it had never looked


def _searched(belief_of, truth, served=None):
    """The order a search of 40 variants measures (each told its true time), told before each ask
    what a serving layout holds (served: seconds, or None)."""
    search = HybridSearch(belief_of(), 40, 0.05, 40)
    order = []
    while True:
        if served is not None:
            search.served_by(served, "1 thread")
        asked = search.ask(1)
        if not asked:
            return order, search.ended_by
        order += asked
        search.tell(asked[0], float(truth[asked[0]]))


def test_a_layout_of_fewer_threads_far_faster_ends_the_search_sooner_and_is_named():
    # 40 variants spread over 40%, as uncertain as a new host leaves them
    rng = np.random.default_rng(3)
    log_mean = np.log(1.0 + 0.4 * rng.random(40))
    cov = 0.1 ** 2 + 0.05 ** 2 * np.eye(40)
    truth = dict(enumerate(np.exp(log_mean + 0.03 * rng.standard_normal(40))))

    def belief_of():
        return Belief(log_mean, cov, {})

    alone, why_alone = _searched(belief_of, truth)
    served, why_served = _searched(belief_of, truth, served=0.5)
    assert len(served) < len(alone)
    assert why_served.startswith("fewer than 0.0001 variants expected 3% faster than the best "
                                 "held and faster than 1 thread's best held (5.0000e-01 s/step)")
    assert "1 thread" not in why_alone and "expected 3% faster" in why_alone
    # a serving layout slower than every variant here changes nothing
    slower, why_slower = _searched(belief_of, truth, served=10.0)
    assert slower == alone and why_slower == why_alone


def test_a_search_not_scored_skips_the_joint_chance_and_measures_the_same(fixture_rows):
    frame = _pool(fixture_rows).frame
    runs = []
    for scored in (True, False):
        belief, _ = prior_belief(None, frame["variant"].tolist(), frame["features"].tolist(),
                                 frame["predicted_s"])
        search = HybridSearch(belief, len(frame), 0.5, len(frame), scored=scored)
        order = []
        while (asked := search.ask(1)):
            order += asked
            search.tell(asked[0], float(frame["median_s"].iloc[asked[0]]))
        runs.append((order, search.ended_by, search.decisions))
    (order, why, decisions), (order_live, why_live, decisions_live) = runs
    assert order == order_live and why == why_live and len(order) > 1
    assert [d.expected for d in decisions] == [d.expected for d in decisions_live]
    assert all(0 <= d.chance <= 1 for d in decisions)
    assert all(np.isnan(d.chance) for d in decisions_live)
