"""The measuring phase of a tuning run: builds, searches on free nodes, re-timing, one writer.

Builds are spread over the nodes; each configuration's search is asked for its next variant while a
node is free; close contenders are re-timed interleaved on one node; rank 0 is the one writer of the
results.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, wait

from hybridtune.runtime import signals
from hybridtune.runtime.executors import on_nodes
from hybridtune.pipeline.measurement_rows import observed, row_ok
from hybridtune.learn import timing
from hybridtune.measure.runner import MeasureOptions, Measurement, measure, retime_interleaved
from hybridtune.measure.tasks import prebuild

BUILD_CHUNK = 8         # variants a node compiles per task (with all its cores)
SECONDS_PER_MEASUREMENT_OVERHEAD = 0.5


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

    def take(self, plan, measurement: Measurement) -> dict | None:
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
        asked = [ids[index][p] for p in [position, *search.remaining()]]
        # what the store answers is not left unmeasured: a resumed run takes it from there
        left[index] += [vid for vid in asked
                        if vid not in plans[index].reused and vid in tasks[index]]
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


def contenders(plan, rows: dict) -> list[str]:
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
