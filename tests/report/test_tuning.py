"""The chosen line names the other variants not told apart from the chosen one and how close they are, and what tells them apart where its interval is wide; timings taken on a busy machine make the line, the notes and the closing count say so."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hybridtune.pipeline.tuning_run import Outcome
from hybridtune.report.tuning import (chosen_line, layout_lines, plus_minus, thread_notes,
                                      unreliable_summary)


def _outcome(rows: dict) -> Outcome:
    config = SimpleNamespace(method=SimpleNamespace(name="radauIIA7"),
                             ivp=SimpleNamespace(name="Cusp"), n=600, threads=1, ranks=1)
    shortlisted = [SimpleNamespace(id=vid, predicted_s=1e-5, rank=rank)
                   for rank, vid in enumerate(rows, 1)]
    plan = SimpleNamespace(configuration=config, shortlisted=shortlisted, pool=len(rows))
    return Outcome(plan, rows, len(rows), ())


def _row(median: float, ci_rel: float, status: str = "ok") -> dict:
    return {"status": status, "median_s": median, "ci_rel": ci_rel,
            "ci_low_s": median * (1 - ci_rel), "ci_high_s": median * (1 + ci_rel)}


def test_a_wide_interval_reaching_others_says_a_larger_budget_tells_them_apart():
    rows = {"a": _row(1.00, 0.10), "b": _row(1.05, 0.08), "c": _row(1.30, 0.02),
            "d": _row(1.02, 0.05, status="timeout")}
    line, record = chosen_line(_outcome(rows), "run_all")
    assert record["chosen"]["id"] == "a"
    assert [t["id"] for t in record["tied"]] == ["b"]
    assert "1 other within 5.0% not told apart from it: a larger --budget tells them apart" in line


def test_a_narrow_interval_names_its_ties_and_nothing_more():
    rows = {"a": _row(1.00, 0.015), "b": _row(1.01, 0.015), "c": _row(1.05, 0.015)}
    line, record = chosen_line(_outcome(rows), "run_all")
    assert record["tied"] == [{"id": "b", "gap": pytest.approx(0.01)}]
    assert "1 other within 1.0% not told apart from it" in line and "--budget" not in line


def test_the_race_decides_and_its_ties_are_named():
    rows = {"a": _row(0.80, 0.01), "b": _row(1.00, 0.01), "c": _row(1.02, 0.01)}
    retimed = {"a": _row(1.00, 0.01), "b": _row(1.01, 0.01), "c": _row(1.06, 0.01)}
    outcome = Outcome(_outcome(rows).plan, rows, 3, (), retimed)
    line, record = chosen_line(outcome, "run_all")
    assert record["chosen"]["id"] == "a" and [t["id"] for t in record["tied"]] == ["b"]
    assert "raced in interleaved rounds against 2" in line
    assert "1 other within 1.0% not told apart" in line


def test_a_configuration_not_raced_says_why():
    rows = {"a": _row(1.00, 0.01), "b": _row(1.02, 0.01)}
    why = "1 thread serves these requests at least 1.80x faster"
    outcome = Outcome(_outcome(rows).plan, rows, 2, (), {}, "", why)
    line, record = chosen_line(outcome, "hybrid")
    assert f"not raced: {why}" in line and record["not_raced"] == why
    line, record = chosen_line(_outcome(rows), "hybrid")
    assert "not raced" not in line and record["not_raced"] == ""
    # a round an earlier run stored still decides where it holds the leader: said so
    kept = Outcome(_outcome(rows).plan, rows, 2, (), {"a": _row(1.0, 0.01), "b": _row(1.03, 0.01)},
                   "", why)
    line, _ = chosen_line(kept, "hybrid")
    assert f"not raced: {why} (the store's earlier round kept)" in line and "raced in" not in line


def test_the_fastest_layout_is_named_and_threads_compare_on_as_many_ranks():
    def record(ranks, threads, seconds, predicted):
        return {"method": "m", "ivp": "Wave1D", "n": 100, "ranks": ranks, "threads": threads,
                "chosen": {"id": f"v{ranks}{threads}", "measured_s": seconds,
                           "predicted_s": predicted}}

    records = [record(1, 1, 4e-4, 4e-4), record(2, 1, 2e-4, 2e-4), record(1, 2, 3e-4, 2e-4)]
    [line] = layout_lines(records)
    assert line.startswith("m Wave1D n=100: fastest layout 2 rank(s) x 1 thread(s): v21")
    assert "1x2 1.50x, 1x1 2.00x" in line
    # 2 ranks x 1 thread is not "fewer threads" than 1 rank x 2 threads: no thread note
    assert thread_notes(records) == []
    assert layout_lines(records[:1]) == []


def test_a_busy_timing_makes_the_chosen_line_and_the_notes_unreliable():
    busy = {"cores": 2, "others_cores": 1.93, "steal_cores": 0.0, "share": 0.965}
    rows = {"a": {**_row(1.00, 1.06), "id": "a", "timing": "alone",
                  "hardware": {"model": "x", "load": busy}},
            "b": {**_row(1.50, 0.01), "id": "b", "timing": "alone",
                  "hardware": {"model": "x", "load": {**busy, "share": 0.01}}}}
    line, record = chosen_line(_outcome(rows), "run_all")
    assert record["chosen"]["load"] == busy and record["unreliable"]["busy"]
    assert record["unreliable"]["timings"] == 1 and record["unreliable"]["of"] == 2
    assert line.endswith("; UNRELIABLE: 1 of 2 timings taken on a busy machine (the chosen one: "
                         "busy: other processes used 1.9 of the 2 cores it needs; interval "
                         "+-106% wider than the 25% limit); the choice means little")
    sound, record_b = chosen_line(_outcome({"b": rows["b"]}), "run_all")
    assert record_b["unreliable"] is None and "UNRELIABLE" not in sound

    def config(threads, seconds, doubt):
        return {"method": "m", "ivp": "Cusp", "n": 6000, "ranks": 1, "threads": threads,
                "chosen": {"id": f"v{threads}", "measured_s": seconds, "predicted_s": 1.0},
                "unreliable": record["unreliable"] if doubt else None}

    records = [config(1, 1.0, False), config(2, 7.0, True)]
    [note] = thread_notes(records)
    assert "UNRELIABLE, the 2-thread timings were taken on a busy machine" in note
    assert "use 1 thread(s)" not in note
    [layout] = layout_lines(records)
    assert layout.endswith("UNRELIABLE: the timings of 1x2 were taken on a busy machine or are "
                           "too wide")
    assert unreliable_summary(records).startswith(
        "warning: 1 of 2 configurations measured on a busy machine")
    assert unreliable_summary([config(1, 1.0, False)]) is None


def test_a_timing_without_an_interval_says_so_not_plus_minus_zero():
    assert plus_minus(0.021) == "+-2.1%"
    for cut_short in (None, float("nan"), float("inf")):
        assert plus_minus(cut_short) == "with no interval (too few repetitions)"
