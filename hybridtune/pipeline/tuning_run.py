"""The tuning pipeline, the only place that knows its order.

predict -> shortlist -> plan -> run -> collect -> choose -> store.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

from threadpoolctl import threadpool_limits

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.scenario import Scenario
from hybridtune.describe.strategy import Strategy
from hybridtune.runtime import signals
from hybridtune.pipeline.measuring_phase import (Collector, retime, run_searches, served_faster,
                                               spread_builds, task_cost)
from hybridtune.pipeline.measurement_rows import row_ok
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.tuning_observer import TuningObserver
from hybridtune.generate.pool import pool_for
from hybridtune.learn import timing
from hybridtune.measure import race
from hybridtune.measure.provenance import build_identity, code_sha256
from hybridtune.measure.runner import MeasureOptions, MeasureTask
from hybridtune.measure.tasks import plan_tasks, reference_states, with_reference
from hybridtune.strategies.protocol import Candidates
from hybridtune.strategies.registry import BELIEF, PLANNED, shortlist, shortlist_search

FINAL_FAILURES = ("compile_error", "crash", "wrong_result")


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
    prior: tuple | None = None      # hybrid: the stores whose model or kernel effects are the belief
    ranks: tuple | None = None      # MPI rank counts (default: the scenario's)
    spans: dict = field(default_factory=dict)   # (ranks, threads) -> nodes a measurement spans


@dataclass(frozen=True)
class TuningPlan:
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
    plan: TuningPlan
    rows: dict                      # variant id -> measurement row (stored or new)
    new: int
    not_measured: tuple             # ids left when the time limit came
    retimed: dict = field(default_factory=dict)     # id -> row of the interleaved re-timing
    ended_by: str = ""              # why hybrid stopped measuring (other strategies: "")
    not_raced: str = ""             # why its close contenders were not raced, where they were not

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

    def tied(self, chosen_id: str) -> dict:
        """id -> gap of each variant the run could not tell apart from the chosen one."""
        def timed(rows: dict) -> dict:
            return {i: (row["median_s"], row.get("ci_low_s"), row.get("ci_high_s"))
                    for i, row in rows.items() if row_ok(row)}
        first = timed({p.id: self.rows[p.id] for p in self.plan.shortlisted if p.id in self.rows})
        retimed = timed(self.retimed)
        decides = timing.round_decides({i: t[0] for i, t in first.items()},
                                       {i: t[0] for i, t in retimed.items()})
        timings = retimed if decides else first
        return race.tied(timings, chosen_id) if chosen_id in timings else {}


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
    """resume key -> the latest stored first timing with that key (retimed: re-timing; never a
    production run's, which tune does not resume from), in the store's order of those rows
    (oldest first: the order of appending, kept in time order by merges)."""
    frame = store.frame("measurements")
    rows: dict = {}
    for row in ([] if frame.empty else frame.to_dict("records")):
        if row.get("code_sha256") and row.get("timing") != timing.PRODUCTION \
                and (row.get("timing") == timing.RETIMED) == retimed:
            key = row_key(row)
            rows.pop(key, None)
            rows[key] = row
    return rows


def latest_round(rows: dict) -> dict:
    """Of a configuration's stored re-timings (id -> row, in the store's order), those of the run
    that re-timed last."""
    if not rows:
        return {}
    last = list(rows.values())[-1].get("run_id")
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
    stored_order = {key: position for position, key in enumerate(retimings or {})}
    pools = {m.name: pool_for(request.scenario, m) for m in request.scenario.methods}
    generated: dict = {}        # one variant's C per method and IVP, whatever the n and layout
    planned = []
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
            reference=False, generated=generated)]
        reused, todo, again = {}, [], {}
        for prediction, task in zip(picked, tasks):
            key = task_key(task, build_id, hardware_id)
            row = None if request.fresh else stored.get(key)
            if row is not None and still_valid(row, request.options, request.retry_failed):
                reused[prediction.id] = row
                if key in (retimings or {}):
                    again[prediction.id] = key
            else:
                todo.append(task)
        kernels = {p.id: [name for _, name in pool[p.id].kernels] for p in picked}
        planned.append((todo, TuningPlan(
            config, tuple(predictions), tuple(picked), len(pool), reused, (),
            {p.id: task for p, task in zip(picked, tasks)}, Candidates.in_order(picked, kernels),
            latest_round({vid: retimings[key] for vid, key in sorted(
                again.items(), key=lambda item: stored_order[item[1]])}),
            sum(p.id not in own for p in picked))))
    # one reference state per method, IVP and n, whatever the layout
    references = reference_states([(plan.configuration, todo) for todo, plan in planned],
                                  request.options)
    return [replace(plan, tasks=tuple(with_reference(todo, plan.configuration, request.options,
                                                     references)))
            for todo, plan in planned]


@dataclass(frozen=True)
class TuningSite:
    """Where a run's work runs: the executor of builds and measurements (it reaches the other
    nodes), the analyses' workers and executor (None: a process pool of `workers` here), and the
    hardware stored measurements are matched to."""
    executor: object
    workers: int
    hardware_id: str
    analysis_executor: object = None


@dataclass(frozen=True)
class Measured:
    """The measuring phase's outcome per configuration, whether it ended before the time limit,
    and what the run wants its user to know."""
    outcomes: tuple
    complete: bool
    notes: tuple = ()


def tune(request: TuneRequest, store, site: TuningSite,
         observer: TuningObserver | None = None) -> TuneResult:
    """Run the whole pipeline; rank 0 only (the executor reaches the other nodes). The observer
    (default: one that ignores everything) is told each event, in the order its class gives."""
    observer = observer or TuningObserver()
    started = time.monotonic()
    deadline = started + request.time_limit_s if request.time_limit_s else None
    offline = predict_scenario(
        request.scenario, request.n, list(request.threads or []) or None, store, site.workers,
        on_loop=observer.analysed, executor=site.analysis_executor,
        ranks=list(request.ranks or []) or None,
        on_analyses=lambda count: observer.phase("kerncraft analyses", count))
    t_predict = time.monotonic() - started
    signals.check()
    observer.predicted(offline)
    mark = time.monotonic()
    plans = plan_configurations(request, offline.rankings, stored_rows(store), site.hardware_id,
                                stored_rows(store, retimed=True))
    t_plan = time.monotonic() - mark
    signals.check()
    for plan in plans:
        observer.planned(plan)
    mark = time.monotonic()
    build_ahead(request, plans, site.executor, observer)
    t_build = time.monotonic() - mark
    mark = time.monotonic()
    measured = measure_plans(request, plans, store, site, observer, deadline)
    t_measure = time.monotonic() - mark
    return TuneResult(measured.outcomes, offline, measured.complete, t_predict, t_plan, t_build,
                      t_measure, time.monotonic() - started, measured.notes)


def build_ahead(request: TuneRequest, plans: list, executor, observer: TuningObserver) -> None:
    """A planned strategy's variants built before measuring; an adaptive strategy builds each
    variant where it is measured (most of its candidates never are)."""
    if request.strategy.name not in PLANNED:
        return
    codes = list(dict.fromkeys(task.generated for plan in plans for task in plan.tasks))
    if codes:
        observer.phase("builds", len(codes))
    spread_builds(executor, codes, observer.built)


def configuration_searches(request: TuneRequest, plans: list, store, hardware_id: str,
                           observer: TuningObserver) -> tuple[list, tuple, str]:
    """Per configuration its search, the notes for the user and the measuring phase's label."""
    if request.strategy.name in BELIEF:
        from hybridtune.pipeline.hybrid_searches import searches   # sklearn: 1 s to import
        found, note = searches(plans, store, request.scenario.machine.sha256, hardware_id,
                               request.strategy.stop, request.max_measurements, request.prior,
                               request.strategy.sample)
        observer.noted(note)
        return found, (note,), "measurements (hybrid: until few variants are expected 3% faster)"
    return [shortlist_search(request.strategy, plan.candidates) for plan in plans], (), \
        "measurements"


def measure_plans(request: TuneRequest, plans: list, store, site: TuningSite,
                  observer: TuningObserver, deadline: float | None) -> Measured:
    """Measure each configuration's search, re-time close contenders, and gather the outcomes.
    The searches measure on one BLAS thread: their matrices are a pool's, the next ask waits on
    them between two measurements, and a second BLAS thread spinning beside a measurement
    disturbs it (the limit set once the searches' libraries are loaded)."""
    executor = site.executor
    collector = Collector(store, observer.measured)
    found, notes, label = configuration_searches(request, plans, store, site.hardware_id,
                                                 observer)
    observer.phase(label, sum(min(len(plan.tasks), search.most())
                              for plan, search in zip(plans, found)))
    with threadpool_limits(1, user_api="blas"):
        # an adaptive search's timing of a variant that could not be raced ends early (the
        # planned strategies' timings, a ground truth's among them, keep their precision)
        new, left = run_searches(executor, plans, found, request.options, collector, deadline,
                                 task_cost(request.options), None if request.strategy.name in
                                 PLANNED else timing.CLOSE_WITHIN)
        rows = [{**plan.reused, **new[index]} for index, plan in enumerate(plans)]
        adaptive = request.strategy.name not in PLANNED
        # an adaptive run's configuration that a layout of fewer threads serves faster is not
        # raced (a planned run's choices, a ground truth's among them, all are)
        not_raced = {index: why for index, why in served_faster(plans, rows).items()
                     if new[index]} if adaptive else {}
        retimed = retime(executor, plans, rows, new, request.options, collector, deadline,
                         observer.phase, skip=set(not_raced))
    # a configuration this run did not re-time keeps the store's latest round (learn/timing's
    # rule tells whether it still decides)
    outcomes = tuple(Outcome(plan, rows[index], len(new[index]), tuple(left[index]),
                             retimed[index] or plan.retimed,
                             found[index].ended_by if adaptive else "",
                             not_raced.get(index, ""))
                     for index, plan in enumerate(plans))
    return Measured(outcomes, not any(left.values()), notes)
