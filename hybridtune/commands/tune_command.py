"""`hybridtune tune`: the main job of a batch allocation, run directly, under mpiexec or under srun."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import replace

from hybridtune.describe.strategy import SPELLINGS
from hybridtune.errors import RequestError
from hybridtune.runtime import signals
from hybridtune.runtime.signals import Terminated

EXIT_INCOMPLETE = 3         # the time limit came first: rerun to continue


def add_arguments(tune) -> None:
    tune.add_argument("--strategy", metavar="S", help=SPELLINGS.replace("%", "%%")
                      + " (default: the scenario's)")
    tune.add_argument("--max-measurements", type=int, metavar="K", help="hybrid: measure at "
                      "most K variants per configuration")
    tune.add_argument("--prior", metavar="STORE", help="hybrid: the trained model of this store "
                      "(opened read-only) as the belief; --db is where the run writes")
    tune.add_argument("--time-limit", type=float, metavar="SECONDS", help="cap on the whole run's "
                      "wall time (default under Slurm: the job's remaining time less a margin); "
                      "what is not measured by then is reported and exit code 3 says: rerun")
    tune.add_argument("--dry-run", action="store_true", help="print the analyses, builds and "
                      "measurements that would run, with an estimated cost; run none")
    tune.add_argument("--fresh", action="store_true", help="ignore stored measurements")
    tune.add_argument("--retry-failed", action="store_true", help="measure variants whose "
                      "stored result is a timeout again")
    tune.add_argument("--shard", metavar="I/N", help="measure only shard I of N of each shortlist "
                      "(variants by id; one store per shard, merged with `store merge`)")


def _strategy(args, scenario):
    from hybridtune.describe.strategy import parse_strategy
    if args.strategy is None:
        return scenario.strategy
    try:
        return parse_strategy(args.strategy)
    except ValueError as error:
        raise RequestError(f"--strategy {args.strategy}: expected {error}") from None


def _shard(text: str | None) -> tuple[int, int]:
    if text is None:
        return 0, 1
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 0 <= int(index) < int(count)):
        raise RequestError(f"--shard {text}: expected I/N with 0 <= I < N, such as 0/4")
    return int(index), int(count)


def _time_limit(args) -> tuple[float | None, str]:
    from hybridtune.runtime.launch import slurm_time_left
    if args.time_limit is not None:
        if not (math.isfinite(args.time_limit) and args.time_limit > 0):
            raise RequestError(f"--time-limit {args.time_limit:g}: expected seconds > 0")
        return args.time_limit, f"time limit {args.time_limit:g} s"
    left = slurm_time_left()
    if left is None:
        return None, "no time limit"
    margin = min(300.0, max(30.0, 0.1 * left))
    return max(1.0, left - margin), (f"time limit {left - margin:.0f} s (the job's remaining "
                                      f"{left:.0f} s less {margin:.0f} s)")


def layout_spans(configs, launch) -> dict:
    """(ranks, threads) -> the nodes one measurement of that layout holds: one node where the
    smallest node's cores take ranks x threads, else one node per rank where the job has the
    nodes and each their threads; a layout that fits neither is refused, before anything runs."""
    cores = min(len(node.cores) for node in launch.nodes)
    spans, refused = {}, []
    for ranks, threads in sorted({(c.ranks, c.threads) for c in configs}):
        if ranks * threads <= cores:
            spans[(ranks, threads)] = 1
        elif 1 < ranks <= len(launch.nodes) and threads <= cores:
            spans[(ranks, threads)] = ranks
        else:
            refused.append((ranks, threads))
    if refused and all(ranks == 1 for ranks, _ in refused):
        raise RequestError(f"threads {', '.join(str(t) for _, t in refused)}: expected at most "
                           f"{cores}, the cores of the smallest node of this job "
                           f"({len(launch.nodes)} node(s); give each rank its node's cores, "
                           "e.g. srun -c)")
    if refused:
        raise RequestError(", ".join(f"{p} ranks x {t} threads" for p, t in refused)
                           + f": more cores than one node of this job has ({cores}) and more "
                           f"nodes than it has ({len(launch.nodes)}); run fewer ranks or "
                           "threads, or give the job more nodes")
    return spans


def reservation_lines(spans: dict, launch) -> list[str]:
    """What each multi-rank layout holds while it is measured (--dry-run and the run's header)."""
    lines = []
    for (ranks, threads), span in sorted(spans.items()):
        if ranks == 1:
            continue
        where = f"{ranks * threads} cores of one node" if span == 1 else \
            f"{span} whole nodes, one rank each (a step across them: srun --overlap)"
        lines.append(f"  {ranks} ranks x {threads} threads: each measurement holds {where}; "
                     "nothing else is measured there meanwhile")
    return lines


def cmd_tune(args, launch) -> int:
    """Rank 0's tune: check the request, then run the pipeline over the job's nodes."""
    from hybridtune.describe.configuration import configurations
    from hybridtune.describe.library import scenarios_dir
    from hybridtune.describe.loader import load
    from hybridtune.commands.predict_command import (check_selection, check_step_budget, check_timing,
                                            open_store)
    from hybridtune.measure.runner import MeasureOptions
    from hybridtune.predict.kerncraft_adapter import check_compiler
    check_selection(args)
    check_timing(args)
    path = args.scenario or str(scenarios_dir() / "default.yaml")
    scenario = load(path, "scenario")
    check_compiler(scenario.machine)
    strategy = _strategy(args, scenario)
    shard = _shard(args.shard)
    limit, limit_note = _time_limit(args)
    configs = list(configurations(scenario, args.n, args.threads, args.ranks))
    spans = layout_spans(configs, launch)
    check_step_budget(configs, scenario.machine, args.budget)
    options = MeasureOptions(ci_target=args.ci, budget_s=args.budget)
    request = replace(_request(scenario, strategy, options, args, limit, shard),
                      ranks=tuple(args.ranks) if args.ranks else None, spans=spans)
    nodes = ", ".join(f"{node.name} ({len(node.cores)} cores, ranks "
                      f"{','.join(map(str, node.ranks))})" for node in launch.nodes)
    out = sys.stderr if args.json else sys.stdout
    print(f"scenario {scenario.name} ({path}): machine {scenario.machine.name}; "
          f"{scenario.machine_note}", file=out, flush=True)
    print(f"strategy {strategy.spelling}; {launch.launcher}: {launch.size} rank(s) on "
          f"{len(launch.nodes)} node(s): {nodes}; {limit_note}", file=out, flush=True)
    hardware = {node.hardware_id for node in launch.nodes}
    if len(hardware) > 1:
        print(f"warning: the nodes differ in hardware ({len(hardware)} kinds); stored "
              f"measurements are matched to rank 0's node", file=sys.stderr)
    extra = {"launcher": launch.launcher, "ranks": launch.size, "strategy": strategy.spelling,
             "shard": list(shard), "nodes": [[n.name, list(n.cores)] for n in launch.nodes]}
    if args.dry_run:
        return _dry_run(request, args, launch)
    for line in reservation_lines(spans, launch):
        print(line.strip(), file=out, flush=True)
    with open_store(args.db, scenario, "tune", extra) as store:
        result = _run(request, store, launch, args)
    return _finish(result, strategy, args)


def _request(scenario, strategy, options, args, limit, shard):
    from hybridtune.pipeline.tuning_run import TuneRequest
    if args.max_measurements is not None and args.max_measurements < 1:
        raise RequestError(f"--max-measurements {args.max_measurements}: expected a count >= 1")
    if args.max_measurements is not None and strategy.name != "hybrid":
        raise RequestError(f"--max-measurements {args.max_measurements}: only the hybrid "
                           f"strategy stops by itself (this run's is {strategy.spelling})")
    if strategy.name == "tpe":
        from hybridtune.strategies.tpe import optuna_module
        optuna_module()
    if args.prior is not None:
        from hybridtune.pipeline.corrections import require_model
        if strategy.name != "hybrid":
            raise RequestError(f"--prior {args.prior}: only the hybrid strategy has a belief "
                               f"(this run's is {strategy.spelling})")
        require_model(args.prior, scenario.machine.sha256, f"--prior {args.prior}",
                      any_machine=True)
    return TuneRequest(scenario, strategy, options, args.n,
                       tuple(args.threads) if args.threads else None, limit, args.fresh,
                       args.retry_failed, shard, args.max_measurements, args.prior)


def _run(request, store, launch, args):
    from hybridtune.commands.predict_command import offline_summary
    from hybridtune.runtime.executors import InlineExecutor, NodeExecutor, PooledExecutor
    from hybridtune.predict.kerncraft_adapter import worker_environment
    from hybridtune.commands.progress import Progress
    from hybridtune.pipeline.tuning_run import tune
    from hybridtune.report.ranking import ranking_lines
    from hybridtune.report.tuning import measured_note, plan_line
    progress = Progress()
    out = sys.stderr if args.json else sys.stdout

    def predicted(offline):
        progress.close()
        print(offline_summary(request.scenario, offline), file=out, flush=True)

    def planned(plan):
        progress.close()
        lines = ranking_lines(plan.configuration, list(plan.ranking), list(plan.shortlisted),
                              args.head)
        print("\n".join(lines + [plan_line(plan, request.strategy.spelling)]), file=out,
              flush=True)

    executor = InlineExecutor() if launch.size == 1 else NodeExecutor(launch)
    analyses = None if launch.size == 1 else PooledExecutor(
        NodeExecutor(launch, slots=lambda node: len(node.cores)), worker_environment)
    try:
        return tune(request, store, executor, len(os.sched_getaffinity(0)),
                    launch.nodes[0].hardware_id, on_predicted=predicted, on_planned=planned,
                    analysis_executor=analyses,
                    on_result=lambda plan, row: progress.advance(measured_note(row)),
                    on_phase=progress.start,
                    on_analysis=lambda job, results: progress.advance(analysis_note(job)),
                    on_built=lambda count: progress.advance(count=count),
                    on_note=lambda note: (progress.close(),
                                          print(f"hybrid {note}", file=out, flush=True)))
    finally:
        progress.close()
        executor.shutdown(wait=False, cancel_futures=True)
        if analyses is not None:
            analyses.shutdown(wait=False, cancel_futures=True)


def analysis_note(job) -> str:
    """template/variant[/IVP]/part of a kerncraft analysis, for progress lines."""
    return "/".join(part for part in job.names[0].split("/") if part)


def _finish(result, strategy, args) -> int:
    from hybridtune.describe.library import default_store
    from hybridtune.commands.predict_command import EXIT_NO_CHOICE, offline_failures
    from hybridtune.report.failures import failure_lines, failures_json, without_choice_line
    from hybridtune.report.ranking import configuration_title
    from hybridtune.report.tuning import (chosen_line, layout_lines, load_json,
                                          measurement_failures, thread_notes,
                                          unreliable_summary, without_choice)
    out = sys.stderr if args.json else sys.stdout
    records = []
    for outcome in result.outcomes:
        line, record = chosen_line(outcome, strategy.spelling)
        print(f"{configuration_title(outcome.plan.configuration)}:", file=out)
        print(line, file=out, flush=True)
        records.append(record)
    for note in thread_notes(records) + layout_lines(records):
        print(note, file=out)
    doubtful = unreliable_summary(records)
    if doubtful:
        print(doubtful, file=out)
    failed, measured = measurement_failures(result.outcomes)
    for line in failure_lines(failed, measured, "measurements"):
        print(line, file=out)
    left = sum(len(outcome.not_measured) for outcome in result.outcomes)
    print(f"predict {result.t_predict_s:.1f} s, plan {result.t_plan_s:.1f} s, build "
          f"{result.t_build_s:.1f} s, measure "
          f"{result.t_measure_s:.1f} s, wall {result.wall_s:.1f} s"
          + (f"; {left} variant(s) not measured before the time limit: rerun to continue"
             if left else ""), file=out, flush=True)
    print(f"stored in {args.db or default_store()}: `hybridtune export SCENARIO --tuned --db "
          "FILE -o DIR` writes the tuned solver, `hybridtune report --db FILE -o DIR` the report",
          file=out, flush=True)
    ended = without_choice(result.outcomes)
    if args.json:
        print(json.dumps({"configurations": records, "complete": result.complete,
                          "without_choice": [{"configuration": title, "why": why}
                                             for title, why in ended],
                          "failures": {"analyses": failures_json(offline_failures(result.offline)),
                                       "measurements": failures_json(failed)},
                          "t_predict_s": result.t_predict_s, "t_plan_s": result.t_plan_s,
                          "t_build_s": result.t_build_s,
                          "t_measure_s": result.t_measure_s, "wall_s": result.wall_s,
                          "notes": list(result.notes), "load": load_json(records)}, indent=1))
    if ended:
        print(without_choice_line(ended, len(result.outcomes), "no measured choice"), file=out,
              flush=True)
        return EXIT_NO_CHOICE
    return 0 if result.complete else EXIT_INCOMPLETE


def _dry_run(request, args, launch) -> int:
    """What a run would analyse, build and measure, with an estimated cost; nothing runs or is
    written (the store, when it exists, is only read)."""
    from hybridtune.compiler.build import is_built
    from hybridtune.describe.library import default_store
    from hybridtune.pipeline.offline_stages import predict_scenario
    from hybridtune.pipeline.measuring_phase import task_cost
    from hybridtune.pipeline.tuning_run import (SECONDS_PER_ANALYSIS, SECONDS_PER_BUILD,
                                        plan_configurations, stored_rows)
    from hybridtune.report.ranking import configuration_title
    from hybridtune.store import Store
    path = args.db or default_store()
    store = Store.open(path, "r") if os.path.exists(path) else None
    try:
        workers = len(os.sched_getaffinity(0))
        offline = predict_scenario(request.scenario, request.n,
                                   list(request.threads or []) or None, store, workers,
                                   dry_run=True, ranks=list(request.ranks or []) or None)
        stored = stored_rows(store) if store is not None else {}
    finally:
        if store is not None:
            store.close()
    nodes = len(launch.nodes)
    print(f"dry run: nothing is analysed, built, measured or stored (store {path})")
    analyses_s = offline.missing * SECONDS_PER_ANALYSIS / workers
    print(f"  kerncraft analyses: {offline.missing} (about {analyses_s:.0f} s with {workers} "
          f"workers); {offline.barrier_note}")
    for line in reservation_lines(request.spans, launch):
        print(line)
    if offline.missing:
        from hybridtune.strategies.sample import sample_size
        spec = request.strategy
        bound = {name: spec.k + sample_size(spec.k, spec.sample)
                 for name in ("top_k", "random", "tpe")}
        most = 0
        for ranking in offline.rankings:
            config = ranking.configuration
            count = min(len(ranking.predictions),
                        bound.get(request.strategy.name, len(ranking.predictions)))
            most += count
            print(f"  {configuration_title(config)}: shortlist known once predicted; "
                  f"{request.strategy.spelling} measures at most {count} of "
                  f"{len(ranking.predictions)}")
        measure_s = most * task_cost(request.options) / nodes
        usual = {"preselect": f"; {request.strategy.spelling} usually keeps a few percent of the "
                              "pool",
                 "hybrid": "; hybrid usually stops after a few percent of the pool"}
        print(f"  measurements: at most {most} (at most {measure_s:.0f} s at --budget "
              f"{request.options.budget_s:g} on {nodes} node(s), builds besides)"
              f"{usual.get(request.strategy.name, '')}")
        return 0
    plans = plan_configurations(request, offline.rankings, stored, launch.nodes[0].hardware_id)
    builds = {task.generated.code for plan in plans for task in plan.tasks
              if not is_built("variant", {"variant.c": task.generated.code}, shared=True,
                              mpi=task.generated.mpi)}
    for plan in plans:
        config = plan.configuration
        print(f"  {configuration_title(config)}: {plan.shortlist_words} "
              f"({request.strategy.spelling}): {len(plan.reused)} in the store, "
              f"{len(plan.tasks)} to measure")
    measurements = sum(len(plan.tasks) for plan in plans)
    build_s = len(builds) * SECONDS_PER_BUILD / (workers * nodes)
    measure_s = measurements * task_cost(request.options) / nodes
    print(f"  builds: {len(builds)} (about {build_s:.0f} s); measurements: {measurements} "
          f"(about {measure_s:.0f} s at --budget {request.options.budget_s:g} on {nodes} "
          f"node(s)); total about {analyses_s + build_s + measure_s:.0f} s")
    return 0


def tune_main(argv: list[str], parse, report_error) -> int:
    """Entry of `hybridtune tune` on every rank: rank 0 runs the command, the others serve it."""
    from hybridtune.runtime.executors import release, serve
    from hybridtune.runtime.launch import LaunchError, discover
    signals.install()
    try:
        launch = discover()
    except LaunchError as error:
        if os.environ.get("SLURM_PROCID", "0") == "0":
            report_error(error)
        return 2
    if launch.rank != 0:
        try:
            return serve(launch)
        except Terminated as stop:
            os._exit(stop.code)
    code = 2
    try:
        args = parse(argv)
        code = cmd_tune(args, launch)
    except Terminated as stop:
        code = _stopped(stop)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    except Exception as error:      # only the CLI turns errors into messages and exit codes
        stop = signals.received()   # after a signal, what broke broke because of it
        code = _stopped(stop) if stop is not None else report_error(error)
    finally:
        release(launch, code)
    if launch.size > 1 and code > 128:
        sys.stdout.flush()
        os._exit(code)
    return code


def _stopped(stop: Terminated) -> int:
    print(f"stopped by {stop}: the store keeps every finished measurement; rerun the same "
          "command to continue", file=sys.stderr, flush=True)
    return stop.code
