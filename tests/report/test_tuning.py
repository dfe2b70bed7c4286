"""The chosen line names the other variants whose interval reaches a wide interval of the chosen one, and none where that interval is narrow."""

from __future__ import annotations

from types import SimpleNamespace

from hybridtune.face.tuning import Outcome
from hybridtune.report.tuning import chosen_line, layout_lines, thread_notes


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
    assert record["chosen"]["id"] == "a" and record["overlapping"] == 1
    assert "1 other(s) within its interval: a larger --budget tells them apart" in line


def test_a_narrow_interval_names_no_overlap():
    rows = {"a": _row(1.00, 0.015), "b": _row(1.01, 0.015)}
    line, record = chosen_line(_outcome(rows), "run_all")
    assert record["overlapping"] == 0 and "within its interval" not in line


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
