"""The measuring phase of a tuning run: builds, searches on free nodes, re-timing, one writer.

Builds are spread over the nodes; each configuration's search is asked for its next variant while a
node is free (an adaptive search's likely next ones built beside it on the idle cores); close
contenders are re-timed interleaved on one node; rank 0 is the one writer of the results.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field, replace

from hybridtune.runtime import signals
from hybridtune.runtime.executors import on_nodes
from hybridtune.pipeline.measurement_rows import MeasuredRow
from hybridtune.learn import timing
from hybridtune.measure.runner import (MeasureOptions, Measurement, measure, retime_interleaved,
                                       variant_built)
from hybridtune.measure.tasks import prebuild, usable_cores
from hybridtune.strategies.protocol import Search

BUILD_CHUNK = 8         # variants a node compiles per task (with all its cores)
SECONDS_PER_MEASUREMENT_OVERHEAD = 0.5


def build_batch(generated: list) -> int:
    """Compile variants on this node, one gcc per usable core; the number built (a failure is
    reported by the measurement that needs it)."""
    prebuild(generated)
    return len(generated)


def built_then_measured(task, ahead: list, options: MeasureOptions) -> Measurement:
    """Measure the task, its variant compiled first together with `ahead` (variants likely
    measured next) where there are any: one gcc per core while nothing is timed."""
    if ahead:
        prebuild([task.generated, *ahead])
    return measure(task, options)


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

    def take(self, plan, measurement: Measurement) -> MeasuredRow | None:
        """The measurement's row, stored and told (None: interrupted, not a result)."""
        if measurement.interrupted:
            return None
        row = measurement.as_row()
        self.store.append_many("measurements", [row])
        if self.on_result:
            self.on_result(plan, row)
        return MeasuredRow.of(row)


@dataclass(frozen=True)
class ConfigurationSearch:
    """One configuration's search as the measuring phase drives it: its plan, its search, the
    tasks it may run, and what it has measured and left so far."""
    plan: object                # tuning_run.TuningPlan (which imports this module)
    search: Search
    tasks: dict                 # variant id -> MeasureTask
    new: dict = field(default_factory=dict)     # variant id -> row measured now (the store's)
    left: list = field(default_factory=list)    # ids left unmeasured, in the search's order

    @classmethod
    def of(cls, plan, search) -> ConfigurationSearch:
        return cls(plan, search, {task.generated.variant_id: task for task in plan.tasks})

    def task_for(self, position: int, deadline: float | None, cost_s: float):
        """The task to run for an asked position, or None where the store answers it (told at
        once: its row, or a failure where there is no task) or the deadline comes first."""
        vid = self.plan.candidates.ids[position]
        stored, task = self.plan.reused.get(vid), self.tasks.get(vid)
        if stored is not None or task is None:
            self.search.tell(position, *(MeasuredRow.of(stored).told if stored else (None, None)))
            return None
        if deadline is not None and time.monotonic() + cost_s > deadline:
            self.stop(position, "the time limit")
            return None
        return task

    def ahead(self, count: int) -> list:
        """Up to `count` variants not yet built among those its search would likely ask for next
        (it looks twice as far: the nearest were mostly built ahead before)."""
        ids = [self.plan.candidates.ids[p] for p in self.search.upcoming(2 * count)]
        unbuilt = [self.tasks[vid].generated for vid in ids
                   if vid in self.tasks and vid not in self.plan.reused]
        return [generated for generated in unbuilt if not variant_built(generated)][:count]

    def held(self) -> list[MeasuredRow]:
        """The ok rows held here: the store's and this run's."""
        return [row for row in map(MeasuredRow.of, [*self.plan.reused.values(),
                                                    *self.new.values()]) if row.ok]

    def timed_beyond(self, options: MeasureOptions, share: float | None) -> MeasureOptions:
        """options whose timings end once their interval lies wholly more than `share` above the
        best held here, the store's rows and this run's (as given where share is None or nothing
        is held): such a variant could not be raced, and a narrower interval changes no choice."""
        held = [row.median_s for row in self.held()]
        if share is None or not held:
            return options
        return replace(options, slower_than_s=min(held) * (1 + share))

    def tell_served(self, serving: list) -> None:
        """Tell the search the best that the layouts serving its requests hold (serving: their
        ConfigurationSearch), each timing at the top of its interval: a lucky first timing
        elsewhere must not end this search."""
        bars = [(_bar(search.plan, search.held()), search.plan.configuration)
                for search in serving]
        seconds, configuration = min(bars, key=lambda item: item[0], default=(math.inf, None))
        if math.isfinite(seconds):
            self.search.served_by(seconds, layout_words(configuration))

    def take(self, position: int, row: MeasuredRow | None) -> None:
        """A measurement came back: told to the search, or (interrupted) the search stopped."""
        if row is None:
            self.stop(position, "interrupted")
            return
        self.new[row.id] = row.columns
        self.search.tell(position, *row.told)

    def stop(self, position: int, why: str) -> None:
        """End the search from outside; what it asked and would still ask is left unmeasured."""
        asked = [self.plan.candidates.ids[p] for p in [position, *self.search.remaining()]]
        # what the store answers is not left unmeasured: a resumed run takes it from there
        self.left.extend(vid for vid in asked
                         if vid not in self.plan.reused and vid in self.tasks)
        self.search.end(why)


def _upper(row: MeasuredRow) -> float:
    """The top of a timing's 95% interval; without one (too few repetitions), its median widened
    by the run-to-run noise of a timing."""
    high = row.ci_high_s
    if high is not None and math.isfinite(high):
        return high
    return row.median_s * math.exp(timing.Z95 * timing.TIMING_SPREAD)


def _bar(plan, rows) -> float:
    """The top of the interval of the best among these rows of plan's layout that a tuned
    library runs there (inf where none)."""
    return min((_upper(row) for row in rows if row.ok and _runs_there(plan, row.id)),
               default=math.inf)


def _runs_there(plan, vid: str) -> bool:
    """Whether a tuned library runs this variant on the plan's layout: on one rank a variant of
    an MPI skeleton does not (the one-process ones run there: dispatch_table.layout_times)."""
    task = plan.all_tasks.get(vid)
    return plan.configuration.ranks > 1 or task is None or not task.generated.mpi


def layout_words(configuration) -> str:
    """A configuration's layout as the lines name it ("1 thread", "2 ranks x 1 thread")."""
    threads = f"{configuration.threads} thread{'s' if configuration.threads > 1 else ''}"
    return threads if configuration.ranks == 1 else f"{configuration.ranks} ranks x {threads}"


def serving_layouts(plans: list) -> dict[int, list[int]]:
    """Per plan, the plans whose layout serves its requests too: the same method, IVP, n and
    ranks on fewer threads (a tuned library runs a request on up to its threads:
    pipeline/dispatch_table)."""
    def key(plan):
        c = plan.configuration
        return c.method.name, c.ivp.name, c.n, c.ranks

    return {index: [other for other, candidate in enumerate(plans)
                    if key(candidate) == key(plan)
                    and candidate.configuration.threads < plan.configuration.threads]
            for index, plan in enumerate(plans)}


def run_searches(executor, plans: list, found: list, options: MeasureOptions,
                 collector: Collector, deadline: float | None, cost_s: float,
                 beyond: float | None = None) -> tuple[dict, dict]:
    """While a node is free, ask each configuration's search in turn for its next variant,
    measure it (or answer it from the store) and tell the search the result, until every search
    has ended or the deadline comes; the new rows and the ids left unmeasured, per configuration.
    With `beyond`, a timing ends once it lies wholly that share above its configuration's best
    (ConfigurationSearch.timed_beyond). Before each ask a search is told what the layouts
    serving its requests hold (serving_layouts)."""
    searches = [ConfigurationSearch.of(plan, search) for plan, search in zip(plans, found)]
    # a planned search changes nothing for what it is told
    serving = {index: [searches[other] for other in others]
               if searches[index].search.planned() is None else []
               for index, others in serving_layouts(plans).items()}
    running: dict = {}          # future -> (ConfigurationSearch, position)
    while True:
        signals.check()
        _ask_while_free(executor, searches, serving, running, options, deadline, cost_s,
                        beyond)
        if not running:
            return ({index: s.new for index, s in enumerate(searches)},
                    {index: s.left for index, s in enumerate(searches)})
        done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
        for future in done:
            searched, position = running.pop(future)
            searched.take(position, collector.take(searched.plan, future.result()))


def _ask_while_free(executor, searches: list, serving: dict, running: dict,
                    options: MeasureOptions, deadline: float | None, cost_s: float,
                    beyond: float | None) -> None:
    """Ask the searches in turn, one variant each, while a node is free and one asks for more;
    each task to run goes into running."""
    # with one measurement in flight the other cores are idle while it builds (a batch of at most
    # BUILD_CHUNK: each variant looked ahead at is a constant liar's ask)
    spare = min(usable_cores(), BUILD_CHUNK) - 1 if executor.capacity == 1 else 0
    asked = True
    while asked and len(running) < executor.capacity:
        asked = False
        for index, searched in enumerate(searches):
            if len(running) >= executor.capacity or searched.search.ended_by:
                continue
            searched.tell_served(serving[index])
            picks = searched.search.ask(1)
            if not picks:
                continue
            asked, position = True, picks[0]
            task = searched.task_for(position, deadline, cost_s)
            if task is not None:
                timed = searched.timed_beyond(options, beyond)
                running[_submitted(executor, searched, task, spare, timed)] = (searched, position)


def _submitted(executor, searched: ConfigurationSearch, task, spare: int, options: MeasureOptions):
    """The task's measurement on a node; a variant not yet built is compiled with up to `spare`
    of those its search would likely ask for next."""
    if task.span > 1:
        return on_nodes(executor, task.span, measure, task, options)
    ahead = searched.ahead(spare) if spare and not variant_built(task.generated) else []
    return executor.submit(built_then_measured, task, ahead, options)


def task_cost(options: MeasureOptions) -> float:
    return options.budget_s + SECONDS_PER_MEASUREMENT_OVERHEAD


def contenders(plan, rows: dict) -> list[str]:
    """Ids of the ok shortlisted variants close enough to the best to be re-timed (learn/timing)."""
    read = {p.id: MeasuredRow.of(rows[p.id]) for p in plan.shortlisted if p.id in rows}
    return timing.contenders({vid: (row.median_s, row.ci_low_s, row.ci_high_s)
                              for vid, row in read.items() if row.ok})


def served_faster(plans: list, rows: list) -> dict[int, str]:
    """index -> why, for each configuration whose fastest first timing lies more than
    CLOSE_WITHIN above the top of the interval of the best that a layout serving its requests
    holds (serving_layouts; rows: per plan id -> row): no race among its variants changes what
    a request runs."""
    def read(index: int) -> list[MeasuredRow]:
        return [MeasuredRow.of(row) for row in rows[index].values()]

    found = {}
    for index, others in serving_layouts(plans).items():
        own = min((row.median_s for row in read(index) if row.ok), default=math.inf)
        bars = {other: _bar(plans[other], read(other)) for other in others}
        layout = min(bars, key=bars.get, default=None)
        bar = bars[layout] if layout is not None else math.inf
        if math.isfinite(own) and 0 < bar and own > bar * (1 + timing.CLOSE_WITHIN):
            found[index] = (f"{layout_words(plans[layout].configuration)} serves these requests "
                            f"{own / bar:.2f}x faster than the best measured here")
    return found


def retime(executor, plans: list, rows: dict, new: dict, options: MeasureOptions,
           collector: Collector, deadline: float | None, on_phase=None, skip=()) -> dict:
    """Re-time, interleaved on one node, the close contenders of every configuration that got new
    measurements or whose contenders no stored round holds (a run stopped before its race), so
    that neither differences between nodes nor a lone lucky timing decide; the configurations
    in skip are not raced."""
    groups = {index: contenders(plan, rows[index]) for index, plan in enumerate(plans)
              if index not in skip}
    groups = {index: ids for index, ids in groups.items()
              if ids and (new[index] or not set(ids) <= set(plans[index].retimed))}
    if on_phase:
        on_phase("re-timing close contenders", sum(len(ids) for ids in groups.values()))
    retimed: dict = {index: {} for index in range(len(plans))}

    def collect(index, future):
        for measurement in future.result():
            row = collector.take(plans[index], measurement)
            if row is not None and row.ok:
                retimed[index][row.id] = row.columns

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
