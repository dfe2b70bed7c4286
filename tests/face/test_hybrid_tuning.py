"""The hybrid run's searches share one belief per IVP: plans grouped by method and IVP, a group held under MAX_TOGETHER candidates."""

from __future__ import annotations

from types import SimpleNamespace

from hybridtune.face import hybrid_tuning
from hybridtune.face.hybrid_tuning import together


def _plan(method: str, ivp: str, n: int, candidates: int):
    configuration = SimpleNamespace(method=SimpleNamespace(name=method),
                                    ivp=SimpleNamespace(name=ivp), n=n, threads=1)
    return SimpleNamespace(configuration=configuration, shortlisted=[None] * candidates)


def test_plans_of_one_method_and_ivp_share_a_group_in_their_order():
    plans = [_plan("m", "A", 600, 10), _plan("m", "B", 600, 10), _plan("m", "A", 6000, 10),
             _plan("other", "A", 600, 10), _plan("m", "B", 6000, 10)]
    assert together(plans) == [[0, 2], [1, 4], [3]]


def test_a_group_holds_at_most_max_together_candidates(monkeypatch):
    monkeypatch.setattr(hybrid_tuning, "MAX_TOGETHER", 25)
    plans = [_plan("m", "A", n, 10) for n in (600, 1200, 2400, 4800, 9600)]
    assert together(plans) == [[0, 1], [2, 3], [4]]
