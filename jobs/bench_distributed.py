"""Benchmark of distributed tuning: throughput on 1 and 2 emulated nodes, the scheduler's cost per
task, and the strategies preselect:5, preselect:10 and run_all on the four paper IVPs.

(a) Throughput: the same compute-bound in-cache variants (InverterChain, n = 4000, 1 thread) timed
    at a fixed number of repetitions through the real NodeExecutor, under mpiexec with one node
    (rank on core 0) and with two emulated nodes (SLURMD_NODENAME a/b, cores 0 and 1), alternating,
    `rounds` times. Parallel efficiency T1 / (2 T2); per variant the median with both nodes busy
    over the median alone.
(b) Scheduler cost: `tasks` tasks that do no work dispatched over two nodes, each result appended
    to a store as the real collector does: wall time per task (dispatch to result stored).
(c) Strategies: `hybridtune tune` with run_all, preselect:5 and preselect:10 on Cusp,
    InverterChain, Medakzo and Wave1D at n = 6000, 1 thread, on two emulated nodes, each from a
    store holding only the predictions. With the paper's definitions (t per step; L the measured
    set; t_best the best of the pool from run_all): overhead (sum_L t - |L| t_best) / (|L| t_best),
    gain over run_all (t_RA - t_AT) / t_RA with t_RA the pool's sum and t_AT = sum_L t + (pool -
    |L|) t_chosen, loss t_chosen / t_best - 1 with the two re-timed interleaved; end-to-end wall.
The run_all store is kept as ground truth (data/bench/distributed-runall.h5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent
IVPS = ("Cusp", "InverterChain", "Medakzo", "Wave1D")


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def two_nodes(argv: list[str], nodes: int) -> list[str]:
    """mpiexec with `nodes` emulated nodes: one rank each, named a, b, on cores 0, 1."""
    command = [str(BIN / "mpiexec")]
    for index in range(nodes):
        if index:
            command.append(":")
        command += ["-n", "1", "-env", "SLURMD_NODENAME", "ab"[index], "taskset", "-c",
                    str(index), *argv]
    return command


def environment() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMI_"))}


# ---- parts run as MPI programs (rank 0 reports JSON on stdout) ----

def rank_throughput(variants: int, repetitions: int) -> dict:
    from hybridtune.describe.configuration import Configuration
    from hybridtune.describe.library import scenarios_dir
    from hybridtune.describe.loader import load
    from hybridtune.runtime.executors import InlineExecutor, NodeExecutor, release, serve
    from hybridtune.runtime.launch import discover
    from hybridtune.pipeline.measuring_phase import build_batch
    from hybridtune.generate.pool import pool_for
    from hybridtune.measure.runner import MeasureOptions, measure
    from hybridtune.measure.tasks import plan_tasks
    launch = discover()
    if launch.rank != 0:
        sys.exit(serve(launch))
    scenario = load(scenarios_dir() / "default.yaml", "scenario")
    method = scenario.methods[0]
    ivp = next(i for i in scenario.ivps if i.name == "InverterChain")
    pool = list(pool_for(scenario, method).values())
    chosen = pool[::max(1, len(pool) // variants)][:variants]
    options = MeasureOptions(ci_target=1e-9, budget_s=1e9, min_repetitions=repetitions,
                             max_repetitions=repetitions)
    tasks = plan_tasks(scenario, Configuration(method, ivp, 4000, 1), chosen, options)
    executor = InlineExecutor() if launch.size == 1 else NodeExecutor(launch)
    for future in [executor.submit(build_batch, [t.generated.code for t in tasks[i::2]])
                   for i in range(2)]:
        future.result()
    started = time.monotonic()
    futures = [executor.submit(measure, task, options) for task in tasks]
    results = [future.result() for future in futures]
    wall = time.monotonic() - started
    executor.shutdown()
    release(launch, 0)
    return {"nodes": len(launch.nodes), "wall_s": wall,
            "median_s": {r.id: r.median_s for r in results},
            "node": {r.id: r.node for r in results},
            "status": sorted({r.status for r in results})}


def _no_work(index: int) -> dict:
    return {"index": index}


def rank_scheduler(tasks: int) -> dict:
    from concurrent.futures import FIRST_COMPLETED, wait
    from hybridtune.runtime.executors import NodeExecutor, release, serve
    from hybridtune.runtime.launch import discover
    from hybridtune.store import Store
    launch = discover()
    if launch.rank != 0:
        sys.exit(serve(launch))
    folder = Path(tempfile.mkdtemp(prefix="ht-sched-"))
    executor = NodeExecutor(launch)
    latencies = []
    with Store.open(folder / "s.h5", "a", run={"command": "bench"}) as store:
        started = time.monotonic()
        running, submitted = {}, 0
        while submitted < tasks or running:
            while submitted < tasks and len(running) < executor.capacity:
                running[executor.submit(_no_work, submitted)] = time.monotonic()
                submitted += 1
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                index = future.result()["index"]
                store.append_many("comm_benchmarks", [{"kind": "scheduler", "threads": 1,
                                                       "median_s": float(index),
                                                       "samples": []}])
                latencies.append(time.monotonic() - running.pop(future))
        wall = time.monotonic() - started
    executor.shutdown()
    release(launch, 0)
    shutil.rmtree(folder)
    return {"tasks": tasks, "nodes": len(launch.nodes), "wall_s": wall,
            "per_task_s": wall / tasks, "latency_median_s": statistics.median(latencies)}


# ---- the driver ----

def run_json(command: list[str], timeout: float = 3600) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=environment(), cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:8])} ... failed ({done.returncode}):\n"
                         f"{done.stderr[-3000:]}")
    text = done.stdout.strip()
    return json.loads(text[text.index("{"):]) if text.startswith("{") or "\n{" not in text \
        else json.loads(text[text.rindex("\n{") + 1:])


def throughput(rounds: int, variants: int, repetitions: int) -> dict:
    me = [sys.executable, str(Path(__file__).resolve()), "--part", "throughput",
          "--variants", str(variants), "--repetitions", str(repetitions)]
    one, two = [], []
    for k in range(rounds):
        one.append(run_json(two_nodes(me, 1)))
        two.append(run_json(two_nodes(me, 2)))
        log(f"throughput round {k + 1}: T1 {one[-1]['wall_s']:.2f} s, T2 {two[-1]['wall_s']:.2f} s")
    t1 = statistics.median(r["wall_s"] for r in one)
    t2 = statistics.median(r["wall_s"] for r in two)
    ratios = {}
    for vid in one[0]["median_s"]:
        alone = statistics.median(r["median_s"][vid] for r in one)
        busy = statistics.median(r["median_s"][vid] for r in two)
        ratios[vid] = busy / alone
    return {"variants": variants, "repetitions": repetitions, "rounds": rounds,
            "t1_s": t1, "t2_s": t2, "efficiency": t1 / (2 * t2),
            "t1_samples_s": [r["wall_s"] for r in one], "t2_samples_s": [r["wall_s"] for r in two],
            "busy_over_alone": ratios,
            "busy_over_alone_max_deviation": max(abs(r - 1) for r in ratios.values()),
            "statuses": sorted({s for r in one + two for s in r["status"]}),
            "nodes_used_with_two": sorted({n for r in two for n in r["node"].values()})}


def scheduler(tasks: int) -> dict:
    me = [sys.executable, str(Path(__file__).resolve()), "--part", "scheduler", "--tasks",
          str(tasks)]
    return run_json(two_nodes(me, 2))


def scenario_text(n: int) -> str:
    return (f"name: bench-distributed\nmethods: [radauIIA7]\nivps: [{', '.join(IVPS)}]\n"
            f"skeletons: [A, B, C, D, E, F, G, H]\nmachine: host\nn: [{n}]\nthreads: [1]\n"
            f"strategy: run_all\n")


def strategies(n: int, budget: float, folder: Path, keep: Path) -> dict:
    from hybridtune.describe.loader import load
    from hybridtune.describe.configuration import Configuration
    from hybridtune.generate.pool import pool_for
    from hybridtune.measure.runner import MeasureOptions, retime_interleaved
    from hybridtune.measure.tasks import plan_tasks
    scenario_path = folder / "bench.scenario.yaml"
    scenario_path.write_text(scenario_text(n))
    predicted = folder / "predicted.h5"
    subprocess.run([str(BIN / "hybridtune"), "predict", str(scenario_path), "--db",
                    str(predicted)], check=True, capture_output=True, env=environment())
    hybridtune = [sys.executable, "-m", "hybridtune"]
    runs = {}
    for strategy in ("preselect:5", "preselect:10", "run_all"):
        store = folder / f"{strategy.replace(':', '-')}.h5"
        shutil.copy(predicted, store)
        started = time.monotonic()
        result = run_json(two_nodes([*hybridtune, "tune", str(scenario_path), "--db", str(store),
                                     "--strategy", strategy, "--budget", str(budget),
                                     "--json"], 2))
        runs[strategy] = {"wall_s": time.monotonic() - started, "result": result,
                          "store": store}
        log(f"{strategy}: {runs[strategy]['wall_s']:.0f} s")
    shutil.copy(runs["run_all"]["store"], keep)
    truth = {r["ivp"]: r for r in runs["run_all"]["result"]["configurations"]}
    ground = _medians(runs["run_all"]["store"])
    scenario = load(scenario_path, "scenario")
    method = scenario.methods[0]
    pool = pool_for(scenario, method)
    table = {}
    for ivp_name in IVPS:
        times = ground[ivp_name]
        best_id = min(times, key=times.get)
        t_best = times[best_id]
        ivp = next(i for i in scenario.ivps if i.name == ivp_name)
        per = {}
        for strategy in ("preselect:5", "preselect:10"):
            record = next(r for r in runs[strategy]["result"]["configurations"]
                          if r["ivp"] == ivp_name)
            measured = [v for v in record["shortlisted"] if v in times]
            chosen = record["chosen"]["id"]
            tasks = plan_tasks(scenario, Configuration(method, ivp, n, 1),
                               [pool[chosen], pool[best_id]], MeasureOptions())
            again = retime_interleaved(tasks, MeasureOptions(budget_s=budget))
            loss = again[0].median_s / again[1].median_s - 1 if chosen != best_id else 0.0
            t_chosen = times[chosen]
            sum_l = sum(times[v] for v in measured)
            t_ra = sum(times.values())
            t_at = sum_l + (len(times) - len(measured)) * t_chosen
            per[strategy] = {"measured": len(measured), "chosen": chosen,
                             "overhead": (sum_l - len(measured) * t_best) / (len(measured) *
                                                                            t_best),
                             "gain_over_run_all": (t_ra - t_at) / t_ra, "loss": loss,
                             "loss_ci_rel": [again[0].ci_rel, again[1].ci_rel],
                             "wall_s": runs[strategy]["wall_s"]}
        per["run_all"] = {"measured": truth[ivp_name]["measured"],
                          "overhead": (sum(times.values()) - len(times) * t_best)
                          / (len(times) * t_best),
                          "gain_over_run_all": 0.0, "loss": 0.0,
                          "wall_s": runs["run_all"]["wall_s"]}
        table[ivp_name] = {"pool": len(times), "best": best_id, "t_best_s": t_best,
                           "strategies": per}
    return {"n": n, "threads": 1, "budget_s": budget, "nodes": 2, "ivps": table}


def _medians(store_path: Path) -> dict:
    """ivp -> variant -> median s/step of its first timing (re-timings left out)."""
    from hybridtune.store import Store
    with Store.open(store_path, "r") as store:
        frame = store.frame("measurements")
    out: dict = {}
    for row in frame.to_dict("records"):
        if row["status"] == "ok" and row["timing"] == "alone":
            out.setdefault(row["ivp"], {}).setdefault(row["id"], row["median_s"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("throughput", "scheduler"))
    parser.add_argument("--variants", type=int, default=12)
    parser.add_argument("--repetitions", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--n", type=int, default=6000)
    parser.add_argument("--budget", type=float, default=0.5)
    parser.add_argument("--skip-strategies", action="store_true")
    parser.add_argument("--output", default=str(ROOT / "data" / "bench" / "distributed.json"))
    args = parser.parse_args()
    if args.part == "throughput":
        print(json.dumps(rank_throughput(args.variants, args.repetitions)))
        return
    if args.part == "scheduler":
        print(json.dumps(rank_scheduler(args.tasks)))
        return
    report = {"command": " ".join(["jobs/bench_distributed.sh", *sys.argv[1:]]),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "cores": len(os.sched_getaffinity(0))}
    report["throughput"] = throughput(args.rounds, args.variants, args.repetitions)
    log(f"efficiency {report['throughput']['efficiency']:.3f}")
    report["scheduler"] = scheduler(args.tasks)
    log(f"scheduler {1000 * report['scheduler']['per_task_s']:.2f} ms per task")
    if not args.skip_strategies:
        with tempfile.TemporaryDirectory(prefix="ht-bench-") as folder:
            keep = ROOT / "data" / "bench" / "distributed-runall.h5"
            report["strategies"] = strategies(args.n, args.budget, Path(folder), keep)
            report["strategies"]["ground_truth_store"] = str(keep.relative_to(ROOT))
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    log(f"wrote {args.output}")


if __name__ == "__main__":
    main()
