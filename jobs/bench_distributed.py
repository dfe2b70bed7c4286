"""Benchmark of distributed tuning: throughput on 1 and 2 emulated nodes, the scheduler's cost per
task, and the strategies preselect:5, preselect:10 and run_all on the four paper IVPs.

(a) Throughput: the same variants through the real NodeExecutor under mpiexec with one node and
    with two emulated nodes (SLURMD_NODENAME a/b, cores 0 and 1), alternating, `rounds` times.
(b) Scheduler cost: `tasks` tasks that do no work dispatched over two nodes, each result stored.
(c) Strategies: `hybridtune tune` with each strategy on Cusp, InverterChain, Medakzo and Wave1D at
    n = 6000, 1 thread, on two emulated nodes, each from a store holding only the predictions.
The numbers' definitions are in hybridtune/pipeline/distributed_study.py. The run_all store is
kept as ground truth (data/bench/distributed-runall.h5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hybridtune.commands.progress import stamped as log
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.measure.launch_env import child_environment
from hybridtune.pipeline.distributed_study import (rank_scheduler, rank_throughput, strategy_table,
                                                   throughput_summary)
from hybridtune.pipeline.first_timings import first_timings
from hybridtune.runtime.executors import serve
from hybridtune.runtime.emulated_nodes import on_emulated_nodes
from hybridtune.runtime.launch import discover

BIN = Path(sys.executable).parent

STRATEGIES = ("preselect:5", "preselect:10", "run_all")


def strategies(n: int, budget: float, folder: Path, keep: Path) -> dict:
    scenario_path = folder / "bench.scenario.yaml"
    scenario_path.write_text(
        "name: bench-distributed\nmethods: [radauIIA7]\nivps: [Cusp, InverterChain, Medakzo, "
        f"Wave1D]\nskeletons: [A, B, C, D, E, F, G, H]\nmachine: host\nn: [{n}]\nthreads: [1]\n"
        "strategy: run_all\n")
    predicted = folder / "predicted.h5"
    subprocess.run([str(BIN / "hybridtune"), "predict", str(scenario_path), "--db", str(predicted)],
                   check=True, capture_output=True, env=child_environment(os.environ))
    runs = {}
    for strategy in STRATEGIES:
        store = folder / f"{strategy.replace(':', '-')}.h5"
        shutil.copy(predicted, store)
        started = time.monotonic()
        result = on_emulated_nodes([sys.executable, "-m", "hybridtune", "tune", str(scenario_path),
                                    "--db", str(store), "--strategy", strategy, "--budget",
                                    str(budget), "--json"], 2, PROJECT_ROOT)
        runs[strategy] = {"wall_s": time.monotonic() - started, "result": result, "store": store}
        log(f"{strategy}: {runs[strategy]['wall_s']:.0f} s")
    shutil.copy(runs["run_all"]["store"], keep)
    return strategy_table(load(scenario_path, "scenario"), n, budget, runs,
                          first_timings(runs["run_all"]["store"]))


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
    parser.add_argument("--output", default=str(PROJECT_ROOT / "data" / "bench" / "distributed.json"))
    args = parser.parse_args()
    if args.part:                   # a rank of one of the MPI parts
        launch = discover()
        if launch.rank != 0:
            sys.exit(serve(launch))
        return print(json.dumps(rank_throughput(launch, args.variants, args.repetitions)
                                if args.part == "throughput" else rank_scheduler(launch, args.tasks)))
    me = [sys.executable, str(Path(__file__).resolve()), "--variants", str(args.variants),
          "--repetitions", str(args.repetitions), "--tasks", str(args.tasks), "--part"]
    one, two = [], []
    for k in range(args.rounds):
        one.append(on_emulated_nodes(me + ["throughput"], 1, PROJECT_ROOT))
        two.append(on_emulated_nodes(me + ["throughput"], 2, PROJECT_ROOT))
        log(f"throughput round {k + 1}: T1 {one[-1]['wall_s']:.2f} s, T2 {two[-1]['wall_s']:.2f} s")
    report = {"command": " ".join(["jobs/bench_distributed.sh", *sys.argv[1:]]),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "cores": len(os.sched_getaffinity(0)),
              "throughput": {"variants": args.variants, "repetitions": args.repetitions,
                             **throughput_summary(one, two)},
              "scheduler": on_emulated_nodes(me + ["scheduler"], 2, PROJECT_ROOT)}
    log(f"efficiency {report['throughput']['efficiency']:.3f}; scheduler "
        f"{1000 * report['scheduler']['per_task_s']:.2f} ms per task")
    if not args.skip_strategies:
        keep = PROJECT_ROOT / "data" / "bench" / "distributed-runall.h5"
        with tempfile.TemporaryDirectory(prefix="ht-bench-") as folder:
            report["strategies"] = {**strategies(args.n, args.budget, Path(folder), keep),
                                    "ground_truth_store": str(keep.relative_to(PROJECT_ROOT))}
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    log(f"wrote {args.output}")


if __name__ == "__main__":
    main()
