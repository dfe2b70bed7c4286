"""Each strategy's search over hand-made candidates: the orders, when they end, and the registry that names them all."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hybridtune.describe.strategy import STRATEGIES, parse_strategy
from hybridtune.learn.belief import Belief
from hybridtune.strategies.hybrid import HybridSearch
from hybridtune.strategies.protocol import Candidates
from hybridtune.strategies.registry import ADAPTIVE, BELIEF, PLANNED, search_for, shortlist


def prediction(vid: str, seconds: float, status: str = "ok"):
    return SimpleNamespace(id=vid, predicted_s=seconds, status=status)


PREDICTIONS = [prediction("c", 1.0), prediction("a", 1.0), prediction("x", float("nan"), "failed"),
               prediction("d", 1.04), prediction("b", 1.2), prediction("e", 3.0)]


def drain(search, step: int = 1) -> list:
    order = []
    while not search.ended_by:
        asked = search.ask(step)
        if not asked:
            break
        order += asked
    return order


def test_candidates_are_the_ranked_ones_fastest_first_ties_by_id():
    candidates = Candidates.from_ranking(PREDICTIONS)
    assert candidates.ids == ("a", "c", "d", "b", "e") and len(candidates) == 5


def test_every_spelling_has_a_search():
    assert set(PLANNED) | set(ADAPTIVE) | set(BELIEF) == set(STRATEGIES)


@pytest.mark.parametrize("spelling, ids", [("preselect:5", ["a", "c", "d"]),
                                           ("preselect:0", ["a", "c"]),
                                           ("top_k:2", ["a", "c"]), ("top_k:9", list("acdbe")),
                                           ("run_all", list("acdbe"))])
def test_planned_orders(spelling, ids):
    candidates = Candidates.from_ranking(PREDICTIONS)
    search = search_for(parse_strategy(spelling), candidates)
    assert [candidates.ids[i] for i in drain(search, step=2)] == ids
    assert search.ended_by and search.most() == len(ids)
    assert [p.id for p in shortlist(parse_strategy(spelling), PREDICTIONS)] == ids


def test_random_draws_the_same_whatever_the_predictions_say():
    spec = parse_strategy("random:3:11")
    drawn = [p.id for p in shortlist(spec, PREDICTIONS)]
    flipped = [prediction(p.id, 10 - p.predicted_s, p.status) for p in PREDICTIONS]
    assert len(set(drawn)) == 3 and [p.id for p in shortlist(spec, flipped)] == drawn
    assert drawn != [p.id for p in shortlist(parse_strategy("random:3:12"), PREDICTIONS)]


def test_a_search_ended_from_outside_says_why_and_what_it_left():
    search = search_for(parse_strategy("top_k:4"), Candidates.from_ranking(PREDICTIONS))
    assert search.ask(1) == [0] and search.remaining() == [1, 2, 3]
    search.end("the time limit")
    assert search.ended_by == "the time limit"


def test_hybrid_asks_the_likeliest_improvement_and_stops_when_none_is_likely():
    mean = np.log([1.0, 1.1, 2.0, 4.0])
    belief = Belief.of(mean, np.zeros(4), np.eye(4) * 0.01)
    search = HybridSearch(belief, 4, stop=0.05, limit=4)
    assert search.ask(2) == [0, 1] and search.busy == {0, 1}
    search.tell(1, None)                                   # a failure: never asked again
    assert not search.ended_by
    search.tell(0, 1.0, 0.01)
    assert drain(search) == [] and 1 in search.excluded
    assert search.ended_by.endswith("variants expected 3% faster than the best held (below 0.05)")
    assert search.decisions[-1].best == 0 and search.decisions[-1].expected < 0.05
