"""The hybrid strategy's run: a belief from the trained model (or the offline model alone) over the variants of each IVP's configurations, one measurement dispatched at a time per free node, the belief conditioned on each result, each configuration stopping when no variant is likely to beat its best."""

from __future__ import annotations

import math
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field

import numpy as np

from hybridtune.face import signals
from hybridtune.learn.hybrid import Belief, prior_belief
from hybridtune.learn.persist import latest_models, load_model
from hybridtune.learn.table import PREDICTION_COLUMNS, joined_rows, latest_predictions
from hybridtune.measure.runner import MeasureOptions, measure


MAX_TOGETHER = 4000      # candidates one belief holds at most (its covariance is their square)


@dataclass
class Search:
    """One configuration's search over plan.shortlisted (all ranked variants): their rows of a
    belief it may share with the searches of the same IVP's other configurations."""
    index: int
    belief: Belief
    ids: list
    stop: float
    limit: int
    start: int = 0              # the belief's row of ids[0]; ids take consecutive rows
    best: int | None = None
    best_row: dict | None = None
    busy: set = field(default_factory=set)
    excluded: set = field(default_factory=set)   # failed for good: never measured again
    done: bool = False
    ended_by: str = ""          # why it stopped measuring

    @property
    def among(self) -> np.ndarray:
        return np.arange(self.start, self.start + len(self.ids))

    def observe(self, position: int, row: dict) -> None:
        self.busy.discard(position)
        if row["status"] == "ok" and row.get("median_s") and math.isfinite(row["median_s"]):
            self.belief.observe(self.start + position, math.log(row["median_s"]), row.get("ci_rel"))
            if self.best is None or row["median_s"] < self.best_row["median_s"]:
                self.best, self.best_row = position, row
        else:
            self.excluded.add(position)

    def next_pick(self) -> int | None:
        """The next variant to measure, or None (and done) when the search has ended."""
        if self.done:
            return None
        tried = sum(1 for i in self.belief.observed if 0 <= i - self.start < len(self.ids)) \
            + len(self.excluded)
        if tried + len(self.busy) >= self.limit:
            self.done = not self.busy
            self.ended_by = ("the whole pool" if self.limit >= len(self.ids)
                             else f"--max-measurements {self.limit}")
            return None
        if self.best is not None:
            ci = self.best_row.get("ci_rel")
            chances = self.belief.chances(math.log(self.best_row["median_s"]),
                                          ci if ci is not None and math.isfinite(ci) else 0.0,
                                          self.among)
            chances[list(self.busy | self.excluded)] = 0.0
            if chances.max() < self.stop:
                self.done = not self.busy
                self.ended_by = f"no variant faster with probability {self.stop:g}"
                return None
        best_log = None if self.best is None else math.log(self.best_row["median_s"])
        pick = self.belief.next_pick(best_log, {self.start + i for i in self.busy | self.excluded},
                                     self.among)
        if pick is None:
            self.done = not self.busy
            self.ended_by = "the whole pool"
            return None
        return pick - self.start


def prior_model(store, predictions, machine_sha256: str, hardware_id: str):
    """The stored Gaussian process for this machine file and hardware, with the store's rows
    (predictions: the store's variant_predictions frame), or None and why not."""
    models = store.frame("models")
    record = latest_models(models, machine_sha256).get("gp") if not models.empty else None
    if record is None:
        return None, (f"the store has no Gaussian process for machine file {machine_sha256[:12]}: "
                      "`hybridtune train --db FILE` fits one on its measurements")
    if record["hardware_id"] != hardware_id:
        return None, (f"the store's Gaussian process for this machine file was trained on "
                      f"measurements of hardware {record['hardware_id'][:12]}, this host is "
                      f"{hardware_id[:12]}: measure here (tune), then `hybridtune train`")
    rows = joined_rows(predictions, store.frame("measurements"), machine_sha256, hardware_id)
    return load_model(record, rows), ""


def together(plans: list) -> list[list[int]]:
    """The plans' indices grouped by method and IVP, in order, a group holding at most
    MAX_TOGETHER candidates: the configurations one belief covers."""
    groups: list[list[int]] = []
    sizes: list[int] = []
    last: dict = {}
    for index, plan in enumerate(plans):
        c = plan.configuration
        key = (c.method.name, c.ivp.name)
        size = len(plan.shortlisted)
        group = last.get(key)
        if group is None or sizes[group] + size > MAX_TOGETHER:
            last[key] = group = len(groups)
            groups.append([])
            sizes.append(0)
        groups[group].append(index)
        sizes[group] += size
    return groups


def searches(plans: list, store, machine_sha256: str, hardware_id: str, stop: float,
             max_measurements: int | None) -> tuple[list, str]:
    """A search per plan, the plans of one IVP sharing a belief (see together), conditioned on
    the rows the store already answers."""
    predictions = store.frame("variant_predictions", PREDICTION_COLUMNS)
    fitted, why_not = prior_model(store, predictions, machine_sha256, hardware_id)
    latest, _, _ = latest_predictions(predictions, machine_sha256)
    features = {tuple(key): f for key, f in zip(
        latest[["method", "ivp", "n", "threads", "variant"]].itertuples(index=False),
        latest["features"])}
    found, note = {}, ""
    for group in together(plans):
        ids, rows, predicted, configurations = [], [], [], []
        for index in group:
            c = plans[index].configuration
            for p in plans[index].shortlisted:
                ids.append(p.id)
                rows.append(features.get((c.method.name, c.ivp.name, c.n, c.threads, p.id), {}))
                predicted.append(p.predicted_s)
                configurations.append((c.n, c.threads))
        belief, note = prior_belief(fitted, ids, rows, predicted, configurations)
        start = 0
        for index in group:
            plan = plans[index]
            mine = [p.id for p in plan.shortlisted]
            search = Search(index, belief, mine, stop, max_measurements or len(mine), start)
            for position, vid in enumerate(mine):
                if vid in plan.reused:
                    search.observe(position, plan.reused[vid])
            found[index] = search
            start += len(mine)
    return [found[index] for index in range(len(plans))], \
        note + (f" ({why_not})" if why_not else "")


def run_hybrid(executor, plans: list, found: list, options: MeasureOptions, collector,
               deadline: float | None, task_cost: float) -> tuple[dict, dict]:
    """Dispatch each search's next pick to a free node until every search has ended (or the
    deadline); the new rows and, where the deadline stopped a search, its next pick as left."""
    tasks = [{task.generated.variant_id: task for task in plan.tasks} for plan in plans]
    new: dict = {index: {} for index in range(len(plans))}
    left: dict = {index: [] for index in range(len(plans))}
    running: dict = {}
    while True:
        signals.check()
        progressed = True
        while len(running) < executor.capacity and progressed:
            progressed = False
            for search in found:
                if len(running) >= executor.capacity:
                    break
                pick = search.next_pick()
                if pick is None:
                    continue
                vid = search.ids[pick]
                if deadline is not None and time.monotonic() + task_cost > deadline:
                    left[search.index] = [vid]
                    search.done = True
                    continue
                task = tasks[search.index].get(vid)
                if task is None:            # answered by the store but not observable: skip it
                    search.excluded.add(pick)
                    progressed = True
                    continue
                search.busy.add(pick)
                running[executor.submit(measure, task, options)] = (search, pick)
                progressed = True
        if not running:
            return new, left
        done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
        for future in done:
            search, pick = running.pop(future)
            row = collector.take(plans[search.index], future.result())
            if row is None:
                search.busy.discard(pick)
                left[search.index] = [search.ids[pick]]
                search.done = True
            else:
                new[search.index][row["id"]] = row
                search.observe(pick, row)
