"""Distributed tuning judged: throughput on emulated nodes, the scheduler's cost, strategies' gains.

The rank parts run as MPI programs (rank 0 reports; the others serve): the same variants timed at a
fixed number of repetitions through the real executors, and tasks that do no work dispatched over
the nodes with each result stored. The strategies' numbers use the paper's definitions (t per
step; L the measured set; t_best the pool's best from run_all): overhead (sum_L t - |L| t_best) /
(|L| t_best), gain over run_all (t_RA - t_AT) / t_RA with t_RA the pool's sum and t_AT = sum_L t
+ (pool - |L|) t_chosen, loss t_chosen / t_best - 1 with the two re-timed interleaved.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.library import scenarios_dir
from hybridtune.describe.loader import load
from hybridtune.generate.pool import pool_for
from hybridtune.measure.runner import MeasureOptions, measure, retime_interleaved
from hybridtune.measure.tasks import plan_tasks
from hybridtune.pipeline.measuring_phase import build_batch
from hybridtune.runtime.executors import InlineExecutor, NodeExecutor, release
from hybridtune.store import Store


def rank_throughput(launch, variants: int, repetitions: int) -> dict:
    """Rank 0: compute-bound in-cache variants (InverterChain, n = 4000, 1 thread) built on the
    nodes and timed at a fixed number of repetitions; the wall time and each one's time."""
    scenario = load(scenarios_dir() / "default.yaml", "scenario")
    method = scenario.methods[0]
    ivp = next(i for i in scenario.ivps if i.name == "InverterChain")
    pool = list(pool_for(scenario, method).values())
    chosen = pool[::max(1, len(pool) // variants)][:variants]
    options = MeasureOptions(ci_target=1e-9, budget_s=1e9, min_repetitions=repetitions,
                             max_repetitions=repetitions)
    tasks = plan_tasks(scenario, Configuration(method, ivp, 4000, 1), chosen, options)
    executor = InlineExecutor() if launch.size == 1 else NodeExecutor(launch)
    for future in [executor.submit(build_batch, [t.generated for t in tasks[i::2]])
                   for i in range(2)]:
        future.result()
    started = time.monotonic()
    results = [future.result() for future in [executor.submit(measure, task, options)
                                              for task in tasks]]
    wall = time.monotonic() - started
    executor.shutdown()
    release(launch, 0)
    return {"nodes": len(launch.nodes), "wall_s": wall,
            "median_s": {r.id: r.median_s for r in results},
            "node": {r.id: r.node for r in results},
            "status": sorted({r.status for r in results})}


def _no_work(index: int) -> dict:
    return {"index": index}


def _dispatched(executor, store, tasks: int) -> list:
    """Every task's latency from dispatch to its result stored, capacity tasks in flight."""
    latencies, running, submitted = [], {}, 0
    while submitted < tasks or running:
        while submitted < tasks and len(running) < executor.capacity:
            running[executor.submit(_no_work, submitted)] = time.monotonic()
            submitted += 1
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for future in done:
            store.append_many("comm_benchmarks", [{
                "kind": "scheduler", "threads": 1, "ranks": 1, "bytes": 0,
                "median_s": float(future.result()["index"]), "samples": [], "provenance": {}}])
            latencies.append(time.monotonic() - running.pop(future))
    return latencies


def rank_scheduler(launch, tasks: int) -> dict:
    """Rank 0: tasks that do no work dispatched over the nodes, each result appended to a store
    as the real collector does; the wall time per task."""
    folder = Path(tempfile.mkdtemp(prefix="ht-sched-"))
    executor = NodeExecutor(launch)
    with Store.open(folder / "s.h5", "a", run={"command": "bench"}) as store:
        started = time.monotonic()
        latencies = _dispatched(executor, store, tasks)
        wall = time.monotonic() - started
    executor.shutdown()
    release(launch, 0)
    shutil.rmtree(folder)
    return {"tasks": tasks, "nodes": len(launch.nodes), "wall_s": wall,
            "per_task_s": wall / tasks, "latency_median_s": statistics.median(latencies)}


def throughput_summary(one: list, two: list) -> dict:
    """Rounds on one node and on two: parallel efficiency T1 / (2 T2); per variant the median
    with both nodes busy over the median alone."""
    t1 = statistics.median(r["wall_s"] for r in one)
    t2 = statistics.median(r["wall_s"] for r in two)
    ratios = {vid: statistics.median(r["median_s"][vid] for r in two)
              / statistics.median(r["median_s"][vid] for r in one) for vid in one[0]["median_s"]}
    return {"rounds": len(one), "t1_s": t1, "t2_s": t2, "efficiency": t1 / (2 * t2),
            "t1_samples_s": [r["wall_s"] for r in one], "t2_samples_s": [r["wall_s"] for r in two],
            "busy_over_alone": ratios,
            "busy_over_alone_max_deviation": max(abs(r - 1) for r in ratios.values()),
            "statuses": sorted({s for r in one + two for s in r["status"]}),
            "nodes_used_with_two": sorted({n for r in two for n in r["node"].values()})}


def _strategy_numbers(times: dict, record: dict, again: list, wall_s: float) -> dict:
    """One strategy's overhead, gain over run_all and loss on one IVP's pool."""
    t_best = min(times.values())
    measured = [v for v in record["shortlisted"] if v in times]
    chosen = record["chosen"]["id"]
    sum_l = sum(times[v] for v in measured)
    t_ra = sum(times.values())
    t_at = sum_l + (len(times) - len(measured)) * times[chosen]
    return {"measured": len(measured), "chosen": chosen,
            "overhead": (sum_l - len(measured) * t_best) / (len(measured) * t_best),
            "gain_over_run_all": (t_ra - t_at) / t_ra,
            "loss": again[0].median_s / again[1].median_s - 1 if chosen != min(
                times, key=times.get) else 0.0,
            "loss_ci_rel": [r.ci_rel for r in again], "wall_s": wall_s}


def strategy_table(scenario, n: int, budget: float, runs: dict, ground: dict) -> dict:
    """Per IVP the strategies' numbers: runs maps each strategy to its tune record and wall time
    (run_all among them, whose first timings are ground: ivp -> id -> s/step)."""
    method = scenario.methods[0]
    pool = pool_for(scenario, method)
    truth = {r["ivp"]: r for r in runs["run_all"]["result"]["configurations"]}
    table = {}
    for ivp in scenario.ivps:
        times = ground[ivp.name]
        best_id = min(times, key=times.get)
        per = {}
        for strategy in (s for s in runs if s != "run_all"):
            record = next(r for r in runs[strategy]["result"]["configurations"]
                          if r["ivp"] == ivp.name)
            tasks = plan_tasks(scenario, Configuration(method, ivp, n, 1),
                               [pool[record["chosen"]["id"]], pool[best_id]])
            again = retime_interleaved(tasks, MeasureOptions(budget_s=budget))
            per[strategy] = _strategy_numbers(times, record, again, runs[strategy]["wall_s"])
        per["run_all"] = {"measured": truth[ivp.name]["measured"],
                          "overhead": (sum(times.values()) - len(times) * times[best_id])
                          / (len(times) * times[best_id]), "gain_over_run_all": 0.0, "loss": 0.0,
                          "wall_s": runs["run_all"]["wall_s"]}
        table[ivp.name] = {"pool": len(times), "best": best_id, "t_best_s": times[best_id],
                           "strategies": per}
    return {"n": n, "threads": 1, "budget_s": budget, "nodes": 2, "ivps": table}
