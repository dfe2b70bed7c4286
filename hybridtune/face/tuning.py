"""The tuning pipeline, the only place that knows its order: predict -> shortlist -> plan -> run -> collect -> choose -> store."""

from __future__ import annotations

import math
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field, replace

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.scenario import Scenario
from hybridtune.describe.strategy import Strategy
from hybridtune.face import signals
from hybridtune.face.executors import on_nodes
from hybridtune.face.hybrid_tuning import searches
from hybridtune.face.rows import observed, row_ok
from hybridtune.face.offline import predict_scenario
from hybridtune.generate.pool import pool_for
from hybridtune.learn import timing
from hybridtune.measure.provenance import build_identity, code_sha256
from hybridtune.measure.runner import (MeasureOptions, MeasureTask, Measurement, measure,
                                       retime_interleaved)
from hybridtune.measure.tasks import plan_tasks, prebuild, with_reference
from hybridtune.strategies.protocol import Candidates
from hybridtune.strategies.registry import BELIEF, PLANNED, shortlist, shortlist_search

FINAL_FAILURES = ("compile_error", "crash", "wrong_result")
BUILD_CHUNK = 8         # variants a node compiles per task (with all its cores)
SECONDS_PER_ANALYSIS = 2.0      # estimates for --dry-run, measured on a 2-core VM
SECONDS_PER_BUILD = 1.5
SECONDS_PER_MEASUREMENT_OVERHEAD = 0.5


@dataclass(frozen=True)
class TuneRequest:
    scenario: Scenario
    strategy: Strategy
    options: MeasureOptions
    n: int | None = None
    threads: tuple | None = None
    time_limit_s: float | None = None
    fresh: bool = False
    retry_failed: bool = False
    shard: tuple = (0, 1)           # (I, N): measure only variants whose id sorts into shard I of N
    max_measurements: int | None = None     # hybrid: at most this many per configuration
    prior: str | None = None        # hybrid: the store whose trained model is the belief
    ranks: tuple | None = None      # MPI rank counts (default: the scenario's)
    spans: dict = field(default_factory=dict)   # (ranks, threads) -> nodes a measurement spans


@dataclass(frozen=True)
class Plan:
    """One configuration: its ranking, the strategy's shortlist, rows reused and tasks to run."""
    configuration: Configuration
    ranking: tuple
    shortlisted: tuple
    pool: int
    reused: dict                    # variant id -> stored measurement row
    tasks: tuple                    # MeasureTask to run, in the strategy's order
    all_tasks: dict                 # variant id -> MeasureTask, for every shortlisted variant
    candidates: Candidates = None   # the shortlist as its search sees it
    retimed: dict = field(default_factory=dict)     # id -> the store's latest re-timing round
    sampled: int = 0                # of the shortlist, a planned strategy's space-filling sample

    @property
    def shortlist_words(self) -> str:
        """How many are shortlisted, the sample among them named."""
        return f"{len(self.shortlisted)} shortlisted" + (
            f" ({self.sampled} of them a space-filling sample)" if self.sampled else "")


@dataclass(frozen=True)
class Outcome:
    plan: Plan
    rows: dict                      # variant id -> measurement row (stored or new)
    new: int
    not_measured: tuple             # ids left when the time limit came
    retimed: dict = field(default_factory=dict)     # id -> row of the interleaved re-timing
    ended_by: str = ""              # why hybrid stopped measuring (other strategies: "")

    def chosen(self) -> tuple | None:
        """(prediction, row) of the variant chosen by learn/timing's rule: the fastest re-timing
        where close ones were re-timed, else the fastest first timing of those measured ok."""
        first = {p.id: self.rows[p.id] for p in self.plan.shortlisted
                 if p.id in self.rows and row_ok(self.rows[p.id])}
        retimed = {i: row for i, row in self.retimed.items() if row_ok(row)}
        best = timing.choose({i: row["median_s"] for i, row in first.items()},
                             {i: row["median_s"] for i, row in retimed.items()})
        if best is None:
            return None
        prediction = next(p for p in self.plan.shortlisted if p.id == best)
        return prediction, retimed.get(best, first.get(best))


@dataclass(frozen=True)
class TuneResult:
    outcomes: tuple
    offline: object
    complete: bool
    t_predict_s: float
    t_plan_s: float                 # shortlists, generated C, reference states
    t_build_s: float
    t_measure_s: float
    wall_s: float
    notes: tuple = ()               # what the run wants its user to know (the hybrid prior)


def task_key(task: MeasureTask, build_id: str, hardware_id: str) -> tuple:
    return (code_sha256(task.generated.code), task.n, task.threads, task.ranks, task.span,
            build_id, hardware_id)


def row_key(row: dict) -> tuple:
    return (row["code_sha256"], row["n"], row["threads"], row["ranks"], row["nodes"],
            row["build_id"], row["hardware_id"])


def still_valid(row: dict, options: MeasureOptions, retry_failed: bool) -> bool:
    """A stored row answers a new request: final failures always, a timeout unless retried, an
    ok row when its interval is as narrow as asked or it was timed under options at least as
    strict (a budget that ran out then would run out again)."""
    status = row["status"]
    if status in FINAL_FAILURES:
        return True
    if status == "timeout":
        return not retry_failed
    if not row_ok(row):
        return False
    ci_rel, target, budget = row.get("ci_rel"), row.get("ci_target"), row.get("budget_s")
    if ci_rel is not None and math.isfinite(ci_rel) and ci_rel <= options.ci_target:
        return True
    return (target is not None and math.isfinite(target) and target <= options.ci_target
            and budget is not None and math.isfinite(budget) and budget >= options.budget_s)


def stored_rows(store, retimed: bool = False) -> dict:
    """resume key -> the latest stored first timing with that key (retimed: re-timing)."""
    frame = store.frame("measurements")
    rows: dict = {}
    for row in ([] if frame.empty else frame.to_dict("records")):
        if row.get("code_sha256") and (row.get("timing") == timing.RETIMED) == retimed:
            rows[row_key(row)] = row
    return rows


def latest_round(rows: dict) -> dict:
    """Of a configuration's stored re-timings (id -> row), those of the run that re-timed last."""
    if not rows:
        return {}
    last = max(rows.values(), key=lambda row: row.get("row_id") or 0).get("run_id")
    return {vid: row for vid, row in rows.items() if row.get("run_id") == last}


def in_shard(picked: list, shard: tuple) -> list:
    index, count = shard
    mine = set(sorted(p.id for p in picked)[index::count])
    return [p for p in picked if p.id in mine]


def plan_configurations(request: TuneRequest, rankings, stored: dict, hardware_id: str,
                        retimings: dict | None = None) -> list:
    """Per configuration: the shortlist, what the store already answers (stored: its first
    timings; retimings: its re-timings, by resume key), and the tasks left."""
    build_id = build_identity()["build_id"]
    plans = []
    pools = {m.name: pool_for(request.scenario, m) for m in request.scenario.methods}
    for ranking in rankings:
        config = ranking.configuration
        predictions = list(ranking.predictions)
        picked = in_shard(shortlist(request.strategy, predictions), request.shard)
        own = {p.id for p in shortlist(replace(request.strategy, sample=0.0), predictions)} \
            if request.strategy.name in PLANNED else {p.id for p in picked}
        pool = pools[config.method.name]
        span = request.spans.get((config.ranks, config.threads), 1)
        tasks = [replace(task, span=span) for task in plan_tasks(
            request.scenario, config, [pool[p.id] for p in picked], request.options,
            reference=False)]
        reused, todo, again = {}, [], {}
        for prediction, task in zip(picked, tasks):
            key = task_key(task, build_id, hardware_id)
            row = None if request.fresh else stored.get(key)
            if row is not None and still_valid(row, request.options, request.retry_failed):
                reused[prediction.id] = row
                if key in (retimings or {}):
                    again[prediction.id] = retimings[key]
            else:
                todo.append(task)
        kernels = {p.id: [name for _, name in pool[p.id].kernels] for p in picked}
        plans.append(Plan(config, tuple(predictions), tuple(picked), len(pool), reused,
                          tuple(with_reference(todo, config, request.options)),
                          {p.id: task for p, task in zip(picked, tasks)},
                          Candidates.in_order(picked, kernels), latest_round(again),
                          sum(p.id not in own for p in picked)))
    return plans


def build_batch(generated: list) -> int:
    """Compile variants on this node, one gcc per usable core; the number built (a failure is
    reported by the measurement that needs it)."""
    prebuild(generated)
    return len(generated)


def spread_builds(executor, codes: list, on_built=None) -> None:
    """The nodes compile the variants, BUILD_CHUNK at a time each, before any is timed."""
    futures = []
    for i in range(0, len(codes), BUILD_CHUNK):
        signals.check()
        future = executor.submit(build_batch, codes[i:i + BUILD_CHUNK])
        if not future.done():
            futures.append(future)
        elif on_built:                      # built at submission (one process): tell at once
            on_built(future.result())
    while futures:
        done, _ = wait(futures, timeout=0.5)
        signals.check()
        for future in done:
            futures.remove(future)
            if on_built:
                on_built(future.result())


class Collector:
    """Rank 0's one writer: stores each result as it arrives and tells the caller."""

    def __init__(self, store, on_result=None):
        self.store = store
        self.on_result = on_result

    def take(self, plan: Plan, measurement: Measurement) -> dict | None:
        if measurement.interrupted:
            return None
        row = measurement.as_row()
        self.store.append_many("measurements", [row])
        if self.on_result:
            self.on_result(plan, row)
        return row


def run_searches(executor, plans: list, found: list, options: MeasureOptions,
                 collector: Collector, deadline: float | None, cost_s: float
                 ) -> tuple[dict, dict]:
    """While a node is free, ask each configuration's search in turn for its next variant,
    measure it (or answer it from the store) and tell the search the result, until every search
    has ended or the deadline comes; the new rows and the ids left unmeasured, per configuration."""
    ids = [plan.candidates.ids for plan in plans]
    tasks = [{task.generated.variant_id: task for task in plan.tasks} for plan in plans]
    new: dict = {index: {} for index in range(len(plans))}
    left: dict = {index: [] for index in range(len(plans))}
    running: dict = {}

    def stop(index: int, position: int, why: str) -> None:
        search = found[index]
        left[index] += [ids[index][position]] + [ids[index][p] for p in search.remaining()]
        search.end(why)

    while True:
        signals.check()
        asked = True
        while asked and len(running) < executor.capacity:
            asked = False
            for index, search in enumerate(found):
                if len(running) >= executor.capacity or search.ended_by:
                    continue
                picks = search.ask(1)
                if not picks:
                    continue
                asked, position = True, picks[0]
                vid = ids[index][position]
                stored, task = plans[index].reused.get(vid), tasks[index].get(vid)
                if stored is not None or task is None:
                    search.tell(position, *(observed(stored) if stored else (None, None)))
                elif deadline is not None and time.monotonic() + cost_s > deadline:
                    stop(index, position, "the time limit")
                else:
                    running[on_nodes(executor, task.span, measure, task, options)] = \
                        (index, position)
        if not running:
            return new, left
        done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
        for future in done:
            index, position = running.pop(future)
            row = collector.take(plans[index], future.result())
            if row is None:
                stop(index, position, "interrupted")
            else:
                new[index][row["id"]] = row
                found[index].tell(position, *observed(row))


def task_cost(options: MeasureOptions) -> float:
    return options.budget_s + SECONDS_PER_MEASUREMENT_OVERHEAD


def contenders(plan: Plan, rows: dict) -> list[str]:
    """Ids of the ok shortlisted variants close enough to the best to be re-timed (learn/timing)."""
    return timing.contenders({p.id: (rows[p.id]["median_s"], rows[p.id].get("ci_low_s"),
                                     rows[p.id].get("ci_high_s"))
                              for p in plan.shortlisted if p.id in rows and row_ok(rows[p.id])})


def retime(executor, plans: list, rows: dict, new: dict, options: MeasureOptions,
           collector: Collector, deadline: float | None, on_phase=None) -> dict:
    """Re-time, interleaved on one node, the close contenders of every configuration that got new
    measurements, so that differences between nodes never decide."""
    groups = {index: contenders(plan, rows[index]) for index, plan in enumerate(plans)
              if new[index]}
    groups = {index: ids for index, ids in groups.items() if ids}
    if on_phase:
        on_phase("re-timing close contenders", sum(len(ids) for ids in groups.values()))
    retimed: dict = {index: {} for index in range(len(plans))}

    def collect(index, future):
        for measurement in future.result():
            row = collector.take(plans[index], measurement)
            if row is not None and row_ok(row):
                retimed[index][row["id"]] = row

    futures = {}
    for index, ids in groups.items():
        signals.check()
        if deadline is not None and time.monotonic() + 2 * len(ids) > deadline:
            continue
        tasks = [plans[index].all_tasks[i] for i in ids]
        future = on_nodes(executor, tasks[0].span, retime_interleaved, tasks, options)
        if future.done():       # run at submission (one process): its rows go in at once
            collect(index, future)
        else:
            futures[future] = index
    while futures:
        done, _ = wait(list(futures), timeout=0.5)
        signals.check()
        for future in done:
            collect(futures.pop(future), future)
    return retimed


def tune(request: TuneRequest, store, executor, workers: int, hardware_id: str,
         on_predicted=None, on_planned=None, on_result=None, on_phase=None,
         on_analysis=None, on_built=None, analysis_executor=None, on_note=None) -> TuneResult:
    """Run the whole pipeline; rank 0 only (the executor reaches the other nodes).

    The callbacks tell the face what happens: on_phase(name, total) as analyses, builds and
    measurements start, on_analysis(job, results), on_built(count) and on_result(plan, row) as
    they end; analysis_executor (default: a process pool here) runs the kerncraft analyses,
    on_predicted(offline) and on_planned(plan) with the rankings and shortlists, on_note(text) with
    what the user must know before measuring starts (the hybrid strategy's prior)."""
    started = time.monotonic()
    deadline = started + request.time_limit_s if request.time_limit_s else None
    offline = predict_scenario(
        request.scenario, request.n, list(request.threads or []) or None, store, workers,
        on_loop=on_analysis, executor=analysis_executor, ranks=list(request.ranks or []) or None,
        on_analyses=(lambda count: on_phase("kerncraft analyses", count)) if on_phase else None)
    t_predict = time.monotonic() - started
    signals.check()
    if on_predicted:
        on_predicted(offline)
    mark = time.monotonic()
    plans = plan_configurations(request, offline.rankings, stored_rows(store), hardware_id,
                                stored_rows(store, retimed=True))
    t_plan = time.monotonic() - mark
    signals.check()
    for plan in plans:
        if on_planned:
            on_planned(plan)
    mark = time.monotonic()
    adaptive = request.strategy.name not in PLANNED
    # an adaptive strategy builds each variant where it is measured: most of its candidates never are
    codes = [] if adaptive else list(dict.fromkeys(task.generated for plan in plans
                                                   for task in plan.tasks))
    if on_phase and codes:
        on_phase("builds", len(codes))
    spread_builds(executor, codes, on_built)
    t_build = time.monotonic() - mark
    mark = time.monotonic()
    collector = Collector(store, on_result)
    notes = ()
    if request.strategy.name in BELIEF:
        found, note = searches(plans, store, request.scenario.machine.sha256, hardware_id,
                               request.strategy.stop, request.max_measurements, request.prior,
                               request.strategy.sample)
        notes = (note,)
        if on_note:
            on_note(note)
        label = "measurements (hybrid: until few variants are expected 3% faster)"
    else:
        found = [shortlist_search(request.strategy, plan.candidates) for plan in plans]
        label = "measurements"
    if on_phase:
        on_phase(label, sum(min(len(plan.tasks), search.most())
                            for plan, search in zip(plans, found)))
    new, left = run_searches(executor, plans, found, request.options, collector, deadline,
                             task_cost(request.options))
    rows = [{**plan.reused, **new[index]} for index, plan in enumerate(plans)]
    retimed = retime(executor, plans, rows, new, request.options, collector, deadline, on_phase)
    t_measure = time.monotonic() - mark
    # a configuration this run did not re-time keeps the store's latest round (learn/timing's
    # rule tells whether it still decides)
    outcomes = tuple(Outcome(plan, rows[index], len(new[index]), tuple(left[index]),
                             retimed[index] or plan.retimed,
                             found[index].ended_by if adaptive else "")
                     for index, plan in enumerate(plans))
    return TuneResult(outcomes, offline, not any(left.values()), t_predict, t_plan, t_build,
                      t_measure, time.monotonic() - started, notes)
