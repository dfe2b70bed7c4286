"""Distributed tuning's numbers: parallel efficiency and the strategies' overhead, gain and loss."""

from types import SimpleNamespace

import pytest

from hybridtune.pipeline.distributed_study import _strategy_numbers, throughput_summary


def test_efficiency_and_busy_over_alone_from_the_rounds():
    one = [{"wall_s": w, "median_s": {"a": 1.0, "b": 2.0}, "node": {"a": "a", "b": "a"},
            "status": ["ok"]} for w in (4.0, 4.2, 3.8)]
    two = [{"wall_s": w, "median_s": {"a": 1.1, "b": 2.0}, "node": {"a": "a", "b": "b"},
            "status": ["ok"]} for w in (2.5, 2.5, 2.6)]
    found = throughput_summary(one, two)
    assert found["rounds"] == 3 and found["efficiency"] == pytest.approx(4.0 / 5.0)
    assert found["busy_over_alone"] == {"a": pytest.approx(1.1), "b": 1.0}
    assert found["busy_over_alone_max_deviation"] == pytest.approx(0.1)
    assert found["nodes_used_with_two"] == ["a", "b"] and found["statuses"] == ["ok"]


def test_overhead_gain_and_loss_follow_the_papers_definitions():
    times = {"v1": 1.0, "v2": 2.0, "v3": 4.0, "v4": 8.0}
    record = {"shortlisted": ["v2", "v3", "unmeasured"], "chosen": {"id": "v2"}}
    again = [SimpleNamespace(median_s=2.2, ci_rel=0.01), SimpleNamespace(median_s=1.1, ci_rel=0.02)]
    found = _strategy_numbers(times, record, again, 9.0)
    assert found["measured"] == 2 and found["chosen"] == "v2"
    assert found["overhead"] == pytest.approx((6.0 - 2 * 1.0) / 2.0)
    t_at = 6.0 + 2 * 2.0
    assert found["gain_over_run_all"] == pytest.approx((15.0 - t_at) / 15.0)
    assert found["loss"] == pytest.approx(1.0) and found["loss_ci_rel"] == [0.01, 0.02]
    best = _strategy_numbers(times, {**record, "chosen": {"id": "v1"}}, again, 9.0)
    assert best["loss"] == 0.0
