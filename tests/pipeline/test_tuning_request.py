"""A tune request's options checked in the pipeline: shard, time limit, strategy and hybrid's options."""

from __future__ import annotations

import pytest

from hybridtune.describe.strategy import parse_strategy
from hybridtune.errors import RequestError
from hybridtune.pipeline import tuning_request
from hybridtune.pipeline.request_checks import check_selection, check_timing
from hybridtune.pipeline.tuning_request import (check_strategy_options, chosen_strategy,
                                                parse_shard, time_limit)


def test_a_shard_is_i_of_n():
    assert parse_shard(None) == (0, 1)
    assert parse_shard("2/4") == (2, 4)
    for wrong in ("4/4", "a/2", "1", "-1/2"):
        with pytest.raises(RequestError, match="expected I/N with 0 <= I < N"):
            parse_shard(wrong)


def test_a_time_limit_is_given_or_the_slurm_jobs_less_a_margin(monkeypatch):
    assert time_limit(60.0) == tuning_request.TimeLimit(60.0, "time limit 60 s")
    with pytest.raises(RequestError, match="expected seconds > 0"):
        time_limit(0.0)
    monkeypatch.setattr(tuning_request, "slurm_time_left", lambda: None)
    assert time_limit(None) == tuning_request.TimeLimit(None, "no time limit")
    monkeypatch.setattr(tuning_request, "slurm_time_left", lambda: 1000.0)
    limit = time_limit(None)
    assert limit.seconds == 900.0
    assert limit.note == "time limit 900 s (the job's remaining 1000 s less 100 s)"


def test_the_strategy_is_the_scenarios_unless_given(default_scenario):
    assert chosen_strategy(None, default_scenario) == default_scenario.strategy
    assert chosen_strategy("top_k:3", default_scenario) == parse_strategy("top_k:3")
    with pytest.raises(RequestError, match="--strategy nonsense: expected"):
        chosen_strategy("nonsense", default_scenario)


def test_hybrids_options_go_with_hybrid_only(default_scenario, tmp_path):
    top = parse_strategy("top_k:3")
    with pytest.raises(RequestError, match="expected a count >= 1"):
        check_strategy_options(parse_strategy("hybrid"), default_scenario, 0, None)
    with pytest.raises(RequestError, match="only the hybrid strategy stops by itself"):
        check_strategy_options(top, default_scenario, 3, None)
    with pytest.raises(RequestError, match="only the hybrid strategy has a belief"):
        check_strategy_options(top, default_scenario, None, (str(tmp_path / "prior.h5"),))
    with pytest.raises(RequestError, match="--prior .*: no store"):
        check_strategy_options(parse_strategy("hybrid"), default_scenario, None,
                               (str(tmp_path / "prior.h5"),))
    check_strategy_options(top, default_scenario, None, None)


def test_the_shared_checks_name_the_option():
    check_selection(None, None, None)
    check_timing(0.02, 1.0)
    for call, message in ((lambda: check_selection(0, None, None), "-n: expected a size >= 1"),
                          (lambda: check_selection(None, [0], None), "--threads: expected counts"),
                          (lambda: check_selection(None, None, [0]), "--ranks: expected counts"),
                          (lambda: check_selection(None, None, None, -1), "--head: expected"),
                          (lambda: check_timing(1.0, 1.0), "--ci 1: expected a fraction"),
                          (lambda: check_timing(0.02, 0.0), "--budget 0: expected seconds")):
        with pytest.raises(RequestError, match=message):
            call()
