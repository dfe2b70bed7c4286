"""run_searches and the re-timing in-process: searches asked while a node is free, rows stored as they come."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from hybridtune.measure.runner import Measurement, MeasureOptions
from hybridtune.measure.runner_child import INTERRUPTED
from hybridtune.pipeline import measuring_phase
from hybridtune.pipeline.measurement_rows import MeasuredRow, row_ok
from hybridtune.pipeline.measuring_phase import Collector, contenders, retime, run_searches
from hybridtune.runtime.executors import InlineExecutor
from hybridtune.strategies.protocol import Candidates, Planned, Search

OPTIONS = MeasureOptions(budget_s=1.0)


class TwoSlots(InlineExecutor):
    """Two nodes' worth of slots, each task run at submission."""
    capacity = 2


class Rows:
    """A store that keeps what is appended."""

    def __init__(self):
        self.appended = []

    def append_many(self, table, rows):
        self.appended += [(table, row) for row in rows]


class Told(Search):
    """A planned search that records what it is told and how it ended."""

    def __init__(self, order):
        self.planned_order = Planned(order, "all asked")
        self.told = []

    def ask(self, count):
        picks = self.planned_order.ask(count)
        self.ended_by = self.planned_order.ended_by
        return picks

    def tell(self, position, seconds, ci_rel=None):
        self.told.append((position, seconds, ci_rel))

    def most(self):
        return self.planned_order.most()

    def remaining(self):
        return self.planned_order.remaining()


def _task(vid):
    return SimpleNamespace(generated=SimpleNamespace(variant_id=vid, code=f"/* {vid} */", mpi=False,
                                                     one_file=False), span=1)


def _configuration(threads=1, n=100, ranks=1, ivp="ivp"):
    return SimpleNamespace(method=SimpleNamespace(name="m"), ivp=SimpleNamespace(name=ivp), n=n,
                           ranks=ranks, threads=threads)


def _plan(ids, reused=None, measured=None, retimed=None, configuration=None):
    """A configuration's plan: candidates ids, rows the store answers, tasks for the others, the
    store's latest re-timing round."""
    reused = reused or {}
    measured = [vid for vid in ids if vid not in reused] if measured is None else measured
    tasks = tuple(_task(vid) for vid in measured)
    return SimpleNamespace(candidates=Candidates(tuple(ids), tuple(range(len(ids)))),
                           reused=reused, tasks=tasks, retimed=retimed or {},
                           all_tasks={t.generated.variant_id: t for t in tasks},
                           shortlisted=tuple(SimpleNamespace(id=vid) for vid in ids),
                           configuration=configuration or _configuration())


def _measured(seconds=None, status="ok", message=""):
    def measure(task, options):
        vid = task.generated.variant_id
        return Measurement(vid, "m", "ivp", 100, 1, status, median_s=seconds.get(vid),
                           ci_low_s=0.99 * seconds.get(vid, 0), ci_high_s=1.01 * seconds.get(vid, 0),
                           ci_rel=0.01, message=message)
    return measure


def _stored(vid, seconds, status="ok"):
    return {"id": vid, "status": status, "median_s": seconds, "ci_rel": 0.005, "run_id": "old"}


def test_a_row_is_an_ok_time_only_when_its_median_is_finite():
    assert MeasuredRow.of(_stored("a", 1.0)).ok and row_ok(_stored("a", 1.0))
    assert not MeasuredRow.of(_stored("a", float("nan"))).ok
    assert not MeasuredRow.of(_stored("a", None)).ok
    assert not MeasuredRow.of(_stored("a", 1.0, "crash")).ok
    assert MeasuredRow.of(_stored("a", 1.0)).told == (1.0, 0.005)
    assert MeasuredRow.of(_stored("a", 1.0, "timeout")).told == (None, 0.005)


def test_the_stores_rows_are_told_and_the_others_measured_stored_and_told(monkeypatch):
    seconds = {"b": 2.0, "c": 3.0}
    monkeypatch.setattr(measuring_phase, "measure", _measured(seconds))
    store, results = Rows(), []
    plan = _plan(["a", "b", "c"], reused={"a": _stored("a", 1.0)})
    search = Told([0, 1, 2])
    new, left = run_searches(InlineExecutor(), [plan], [search], OPTIONS,
                             Collector(store, lambda plan, row: results.append(row)), None, 1.0)
    assert sorted(new[0]) == ["b", "c"] and left == {0: []}
    assert search.told == [(0, 1.0, 0.005), (1, 2.0, 0.01), (2, 3.0, 0.01)]
    assert [table for table, _ in store.appended] == ["measurements"] * 2
    written = [row for _, row in store.appended]
    assert written == results == [new[0]["b"], new[0]["c"]]
    assert set(written[0]) == set(Measurement("b", "m", "i", 1, 1, "ok").as_json()) | {"row_id"}


def test_a_variant_without_a_task_is_told_a_failure_unmeasured(monkeypatch):
    monkeypatch.setattr(measuring_phase, "measure", _measured({"a": 1.0}))
    search = Told([0, 1])
    new, left = run_searches(InlineExecutor(), [_plan(["a", "b"], measured=["a"])], [search],
                             OPTIONS, Collector(Rows()), None, 1.0)
    assert list(new[0]) == ["a"] and search.told[1] == (1, None, None) and left == {0: []}


def test_the_time_limit_ends_each_search_with_what_it_left(monkeypatch):
    monkeypatch.setattr(measuring_phase, "measure", _measured({}))
    searches = [Told([0, 1, 2]), Told([1, 0])]
    plans = [_plan(["a", "b", "c"], reused={"b": _stored("b", 1.0)}), _plan(["d", "e"])]
    new, left = run_searches(InlineExecutor(), plans, searches, OPTIONS, Collector(Rows()),
                             deadline=0.0, cost_s=1.0)
    assert new == {0: {}, 1: {}}
    # what the store answers is not left: a resumed run takes it from there
    assert left == {0: ["a", "c"], 1: ["e", "d"]}
    assert [s.ended_by for s in searches] == ["the time limit"] * 2


def test_an_interrupted_measurement_is_not_stored_and_ends_its_search(monkeypatch):
    monkeypatch.setattr(measuring_phase, "measure",
                        _measured({"a": 1.0}, status="crash", message=f"{INTERRUPTED} SIGTERM"))
    store, search = Rows(), Told([0, 1])
    new, left = run_searches(InlineExecutor(), [_plan(["a", "b"])], [search], OPTIONS,
                             Collector(store), None, 1.0)
    assert new == {0: {}} and left == {0: ["a", "b"]} and not store.appended
    assert search.ended_by == "interrupted" and search.told == []


def test_searches_take_turns_while_a_node_is_free(monkeypatch):
    order = []

    def measure(task, options):
        order.append(task.generated.variant_id)
        return _measured({task.generated.variant_id: 1.0})(task, options)

    monkeypatch.setattr(measuring_phase, "measure", measure)
    plans = [_plan(["a", "b"]), _plan(["c", "d"])]
    run_searches(TwoSlots(), plans, [Told([0, 1]), Told([0, 1])], OPTIONS,
                 Collector(Rows()), None, 1.0)
    assert order == ["a", "c", "b", "d"]
    order.clear()
    run_searches(InlineExecutor(), plans, [Told([0, 1]), Told([0, 1])], OPTIONS,
                 Collector(Rows()), None, 1.0)
    assert order == ["a", "b", "c", "d"]     # one slot: the first search asked again first


def test_with_a_share_a_timing_ends_beyond_the_best_held_so_far(monkeypatch):
    given = []

    def measure(task, options):
        given.append((task.generated.variant_id, options.slower_than_s))
        return _measured({"b": 2.0, "c": 0.5, "d": 3.0})(task, options)

    monkeypatch.setattr(measuring_phase, "measure", measure)
    plan = _plan(["a", "b", "c", "d"], reused={"a": _stored("a", 1.0)})
    run_searches(InlineExecutor(), [plan], [Told([0, 1, 2, 3])], OPTIONS, Collector(Rows()), None,
                 1.0, beyond=0.1)
    assert given == [("b", pytest.approx(1.1)), ("c", pytest.approx(1.1)),
                     ("d", pytest.approx(0.55))]           # the best held: the store's, then c
    given.clear()
    run_searches(InlineExecutor(), [_plan(["b", "c"])], [Told([0, 1])], OPTIONS,
                 Collector(Rows()), None, 1.0)
    assert given == [("b", math.inf), ("c", math.inf)]   # without a share: timed to the end


def _interleaved_ids(monkeypatch) -> list:
    """The ids the re-timing races, each re-timed ok at 1 s a step (recorded in the list)."""
    retimed_ids = []

    def interleaved(tasks, options):
        retimed_ids.extend(t.generated.variant_id for t in tasks)
        return [Measurement(t.generated.variant_id, "m", "i", 100, 1, "ok", median_s=1.0,
                            ci_rel=0.01, timing="interleaved") for t in tasks]

    monkeypatch.setattr(measuring_phase, "retime_interleaved", interleaved)
    return retimed_ids


def test_close_contenders_are_retimed_and_kept_where_ok(monkeypatch):
    retimed_ids = _interleaved_ids(monkeypatch)
    plan = _plan(["a", "b", "c"])
    rows = {"a": {"id": "a", "status": "ok", "median_s": 1.0, "ci_low_s": 0.99, "ci_high_s": 1.01},
            "b": {"id": "b", "status": "ok", "median_s": 1.005, "ci_low_s": 0.995,
                  "ci_high_s": 1.015},
            "c": {"id": "c", "status": "ok", "median_s": 2.0, "ci_low_s": 1.98, "ci_high_s": 2.02}}
    assert contenders(plan, rows) == ["a", "b"]
    store = Rows()
    retimed = retime(InlineExecutor(), [plan], [rows], {0: {"a": rows["a"]}}, OPTIONS,
                     Collector(store), None)
    assert retimed_ids == ["a", "b"] and sorted(retimed[0]) == ["a", "b"]
    assert all(row["timing"] == "interleaved" and math.isfinite(row["median_s"])
               for row in retimed[0].values())
    assert [row for _, row in store.appended] == list(retimed[0].values())
    # nothing new measured and a stored round holds the contenders: nothing re-timed
    raced = _plan(["a", "b", "c"], retimed=retimed[0])
    retimed_ids.clear()
    assert retime(InlineExecutor(), [raced], [rows], {0: {}}, OPTIONS, Collector(Rows()),
                  None) == {0: {}} and retimed_ids == []
    # nothing new measured but no round stored (a run stopped before its race): raced now
    again = retime(InlineExecutor(), [plan], [rows], {0: {}}, OPTIONS, Collector(Rows()), None)
    assert retimed_ids == ["a", "b"] and sorted(again[0]) == ["a", "b"]


class Served(Told):
    """A planned search that records what the layouts serving it hold."""

    def __init__(self, order):
        super().__init__(order)
        self.served = []

    def served_by(self, seconds, layout):
        self.served.append((seconds, layout))


def test_a_layout_of_fewer_threads_serves_the_same_methods_ivp_n_and_ranks():
    plans = [_plan(["a"], configuration=_configuration(threads=t, n=n, ranks=r))
             for t, n, r in [(1, 100, 1), (2, 100, 1), (4, 100, 1), (2, 200, 1), (2, 100, 2)]]
    assert measuring_phase.serving_layouts(plans) == {0: [], 1: [0], 2: [0, 1], 3: [], 4: []}


def test_each_search_is_told_the_top_of_the_best_interval_its_serving_layouts_hold(monkeypatch):
    monkeypatch.setattr(measuring_phase, "measure", _measured({"b": 2.0, "c": 0.5, "e": 9.0}))
    one = _plan(["a", "b", "c"], reused={"a": {**_stored("a", 1.0), "ci_high_s": 1.1}})
    two = _plan(["d", "e"], reused={"d": _stored("d", 3.0)},
                configuration=_configuration(threads=2))
    searches = [Served([0, 1, 2]), Served([0, 1])]
    run_searches(InlineExecutor(), [one, two], searches, OPTIONS, Collector(Rows()), None, 1.0)
    assert searches[0].served == []
    # the store's rows answer without a slot: the 2-thread search was asked (d, stored) while the
    # 1-thread one held only a; then the best of the 1-thread search's end, c, at its interval's top
    assert searches[1].served == [(pytest.approx(1.1), "1 thread"),
                                  (pytest.approx(0.505), "1 thread")]


def test_a_configuration_a_layout_of_fewer_threads_serves_far_faster_is_not_raced(monkeypatch):
    retimed_ids = _interleaved_ids(monkeypatch)

    def row(vid, seconds):
        return {"id": vid, "status": "ok", "median_s": seconds, "ci_low_s": 0.99 * seconds,
                "ci_high_s": 1.01 * seconds}

    plans = [_plan(["a", "b"]), _plan(["c", "d"], configuration=_configuration(threads=2)),
             _plan(["e", "f"], configuration=_configuration(threads=2, n=200))]
    rows = [{"a": row("a", 1.0), "b": row("b", 1.01)}, {"c": row("c", 1.5), "d": row("d", 1.51)},
            {"e": row("e", 5.0), "f": row("f", 5.01)}]
    found = measuring_phase.served_faster(plans, rows)
    assert found == {1: "1 thread serves these requests 1.49x faster than the best measured here"}
    # within CLOSE_WITHIN of the serving layout's best: raced
    assert measuring_phase.served_faster(plans, [rows[0], {"c": row("c", 1.1)}, rows[2]]) == {}
    retime(InlineExecutor(), plans, rows, {0: rows[0], 1: rows[1], 2: rows[2]}, OPTIONS,
           Collector(Rows()), None, skip=set(found))
    assert retimed_ids == ["a", "b", "e", "f"]


def test_one_ranks_mpi_variants_and_intervals_of_too_few_repetitions_set_no_bar_below_them():
    one = _plan(["a", "m"], configuration=_configuration(threads=1))
    one.all_tasks["m"].generated.mpi = True      # an MPI skeleton's variant: one rank never runs it
    two = _plan(["c"], configuration=_configuration(threads=2))
    rows = [{"a": {"id": "a", "status": "ok", "median_s": 1.0, "ci_high_s": None},
             "m": {"id": "m", "status": "ok", "median_s": 0.1, "ci_high_s": 0.11}},
            {"c": {"id": "c", "status": "ok", "median_s": 1.1, "ci_high_s": 1.12}}]
    # the bar: a's median widened by a timing's run-to-run noise (1.063), not m's 0.11
    assert measuring_phase.served_faster([one, two], rows) == {}
    rows[1]["c"] = {**rows[1]["c"], "median_s": 1.2}
    assert measuring_phase.served_faster([one, two], rows) == {
        1: "1 thread serves these requests 1.13x faster than the best measured here"}


@pytest.mark.parametrize("stored", [None, _stored("a", 1.0)])
def test_the_store_answers_before_the_time_limit_is_asked(monkeypatch, stored):
    monkeypatch.setattr(measuring_phase, "measure", _measured({}))
    search = Told([0])
    plan = _plan(["a"], reused={"a": stored} if stored else {}, measured=[])
    new, left = run_searches(InlineExecutor(), [plan], [search], OPTIONS, Collector(Rows()),
                             deadline=0.0, cost_s=1.0)
    assert left == {0: []} and search.ended_by == "all asked"


class Looking(Told):
    """A planned search that also says what it would ask next."""

    def upcoming(self, count):
        return self.planned_order.remaining()[:count]


def test_a_variant_not_yet_built_is_built_with_those_likely_next_on_the_idle_cores(monkeypatch):
    # what is compiled is the point here, not the compiler: builds are recorded, not run
    built, batches = set(), []

    def prebuild(generated):
        batches.append([g.variant_id for g in generated])
        built.update(g.variant_id for g in generated)

    monkeypatch.setattr(measuring_phase, "prebuild", prebuild)
    monkeypatch.setattr(measuring_phase, "variant_built", lambda g: g.variant_id in built)
    monkeypatch.setattr(measuring_phase, "usable_cores", lambda: 3)
    monkeypatch.setattr(measuring_phase, "measure", _measured(dict.fromkeys("abcdef", 1.0)))
    plan = _plan(list("abcdef"), reused={"c": _stored("c", 1.0)})
    run_searches(InlineExecutor(), [plan], [Looking(list(range(6)))], OPTIONS,
                 Collector(Rows()), None, 1.0)
    # b and d were built beside a (c, likely next too, is the store's: never built), f beside e
    assert batches == [["a", "b", "d"], ["e", "f"]]
    batches.clear(), built.clear()
    run_searches(TwoSlots(), [plan], [Looking(list(range(6)))], OPTIONS, Collector(Rows()),
                 None, 1.0)
    assert batches == []        # two in flight: no core is idle while one builds
