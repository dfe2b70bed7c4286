"""`hybridtune tune`: the main job of a batch allocation, run directly, under mpiexec or under srun."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

from hybridtune.commands.exit_codes import (EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_NO_CHOICE,
                                            EXIT_OK)
from hybridtune.commands.offline_text import analysis_note, offline_failures, offline_summary
from hybridtune.commands.progress import Progress
from hybridtune.commands.selection_arguments import add_selection
from hybridtune.describe.configuration import configurations
from hybridtune.describe.library import default_store, scenarios_dir
from hybridtune.describe.loader import load
from hybridtune.describe.strategy import SPELLINGS
from hybridtune.measure.runner import MeasureOptions
from hybridtune.pipeline.measurement_layouts import layout_spans, reservation_lines
from hybridtune.pipeline.request_checks import check_selection, check_step_budget, check_timing
from hybridtune.pipeline.store_policy import open_store
from hybridtune.pipeline.tune_dry_run import USUAL_SHARE, dry_run_plan
from hybridtune.pipeline.tuning_observer import TuningObserver
from hybridtune.pipeline.tuning_request import (check_strategy_options, chosen_strategy,
                                                parse_shard, time_limit)
from hybridtune.pipeline.tuning_run import TuneRequest, TuningSite, tune
from hybridtune.predict.kerncraft_adapter import check_compiler, worker_environment
from hybridtune.report.failures import failure_lines, failures_json, without_choice_line
from hybridtune.report.ranking import configuration_title, ranking_lines
from hybridtune.report.tuning import (chosen_line, layout_lines, load_json, measured_note,
                                      measurement_failures, plan_line, thread_notes,
                                      unreliable_summary, without_choice)
from hybridtune.runtime import signals
from hybridtune.runtime.executors import (InlineExecutor, NodeExecutor, PooledExecutor, release,
                                          serve)
from hybridtune.runtime.launch import LaunchError, discover
from hybridtune.runtime.signals import Terminated


def add_arguments(tune_parser) -> None:
    tune_parser.add_argument("scenario", nargs="?", default=None,
                             help="scenario file (default: scenarios/default.yaml)")
    add_selection(tune_parser)
    tune_parser.add_argument("--head", type=int, default=5,
                             help="ranked variants shown per configuration")
    tune_parser.add_argument("--ci", type=float, default=0.02, help="stop timing when the 95%% "
                             "CI of the median is within this fraction")
    tune_parser.add_argument("--budget", type=float, default=1.0,
                             help="timing seconds per variant")
    tune_parser.add_argument("--json", action="store_true")
    _add_run_arguments(tune_parser)


def _add_run_arguments(tune_parser) -> None:
    add = tune_parser.add_argument
    add("--strategy", metavar="S", help=SPELLINGS.replace("%", "%%")
        + " (default: the scenario's)")
    add("--max-measurements", type=int, metavar="K", help="hybrid: measure at most K variants "
        "per configuration")
    add("--prior", metavar="STORE", action="append", help="hybrid (repeatable): these stores, "
        "opened read-only, as the belief: a model of this hardware in one of them, else the "
        "kernel effects of their whole pools, else a model of other hardware; --db is where the "
        "run writes")
    add("--time-limit", type=float, metavar="SECONDS", help="cap on the whole run's wall time "
        "(default under Slurm: the job's remaining time less a margin); what is not measured by "
        "then is reported and exit code 3 says: rerun")
    add("--dry-run", action="store_true", help="print the analyses, builds and measurements "
        "that would run, with an estimated cost; run none")
    add("--fresh", action="store_true", help="ignore stored measurements")
    add("--retry-failed", action="store_true", help="measure variants whose stored result is a "
        "timeout again")
    add("--shard", metavar="I/N", help="measure only shard I of N of each shortlist (variants by "
        "id; one store per shard, merged with `store merge`)")


@dataclass(frozen=True)
class CheckedRun:
    """A request checked against its job before anything runs, with what its header says."""
    request: TuneRequest
    path: str
    limit_note: str
    shard: tuple


def _checked(args, launch) -> CheckedRun:
    check_selection(args.n, args.threads, args.ranks, args.head)
    check_timing(args.ci, args.budget)
    path = args.scenario or str(scenarios_dir() / "default.yaml")
    scenario = load(path, "scenario")
    check_compiler(scenario.machine)
    strategy = chosen_strategy(args.strategy, scenario)
    shard = parse_shard(args.shard)
    limit = time_limit(args.time_limit)
    configs = list(configurations(scenario, args.n, args.threads, args.ranks))
    spans = layout_spans(configs, launch)
    check_step_budget(configs, scenario.machine, args.budget)
    options = MeasureOptions(ci_target=args.ci, budget_s=args.budget)
    prior = tuple(args.prior) if args.prior else None
    check_strategy_options(strategy, scenario, args.max_measurements, prior)
    request = TuneRequest(scenario, strategy, options, args.n,
                          tuple(args.threads) if args.threads else None, limit.seconds,
                          args.fresh, args.retry_failed, shard, args.max_measurements, prior,
                          tuple(args.ranks) if args.ranks else None, spans)
    return CheckedRun(request, path, limit.note, shard)


def _header(run: CheckedRun, launch, out) -> None:
    scenario, strategy = run.request.scenario, run.request.strategy
    nodes = ", ".join(f"{node.name} ({len(node.cores)} cores, ranks "
                      f"{','.join(map(str, node.ranks))})" for node in launch.nodes)
    print(f"scenario {scenario.name} ({run.path}): machine {scenario.machine.name}; "
          f"{scenario.machine_note}", file=out, flush=True)
    print(f"strategy {strategy.spelling}; {launch.launcher}: {launch.size} rank(s) on "
          f"{len(launch.nodes)} node(s): {nodes}; {run.limit_note}", file=out, flush=True)
    hardware = {node.hardware_id for node in launch.nodes}
    if len(hardware) > 1:
        print(f"warning: the nodes differ in hardware ({len(hardware)} kinds); stored "
              f"measurements are matched to rank 0's node", file=sys.stderr)


def cmd_tune(args, launch) -> int:
    """Rank 0's tune: check the request, then run the pipeline over the job's nodes."""
    run = _checked(args, launch)
    out = sys.stderr if args.json else sys.stdout
    _header(run, launch, out)
    if args.dry_run:
        return _dry_run(run.request, args, launch)
    for line in reservation_lines(run.request.spans, launch):
        print(line.strip(), file=out, flush=True)
    extra = {"launcher": launch.launcher, "ranks": launch.size,
             "strategy": run.request.strategy.spelling, "shard": list(run.shard),
             "nodes": [[n.name, list(n.cores)] for n in launch.nodes]}
    with open_store(args.db, run.request.scenario, "tune", extra) as store:
        result = _run(run.request, store, launch, args)
    return _finish(result, run.request.strategy, args)


class PrintingObserver(TuningObserver):
    """The command line's view of a run: a progress bar per phase, rankings and notes printed."""

    def __init__(self, request: TuneRequest, head: int, out):
        self.request, self.head, self.out = request, head, out
        self.progress = Progress()

    def phase(self, label: str, total: int) -> None:
        self.progress.start(label, total)

    def analysed(self, job, results) -> None:
        self.progress.advance(analysis_note(job))

    def built(self, count: int) -> None:
        self.progress.advance(count=count)

    def measured(self, plan, row: dict) -> None:
        self.progress.advance(measured_note(row))

    def predicted(self, offline) -> None:
        self.progress.close()
        print(offline_summary(self.request.scenario, offline), file=self.out, flush=True)

    def planned(self, plan) -> None:
        self.progress.close()
        lines = ranking_lines(plan.configuration, list(plan.ranking), list(plan.shortlisted),
                              self.head)
        print("\n".join(lines + [plan_line(plan, self.request.strategy.spelling)]),
              file=self.out, flush=True)

    def noted(self, text: str) -> None:
        self.progress.close()
        print(f"hybrid {text}", file=self.out, flush=True)


def _run(request: TuneRequest, store, launch, args):
    observer = PrintingObserver(request, args.head, sys.stderr if args.json else sys.stdout)
    executor = InlineExecutor() if launch.size == 1 else NodeExecutor(launch)
    analyses = None if launch.size == 1 else PooledExecutor(
        NodeExecutor(launch, slots=lambda node: len(node.cores)), worker_environment)
    site = TuningSite(executor, len(os.sched_getaffinity(0)), launch.nodes[0].hardware_id,
                      analyses)
    try:
        return tune(request, store, site, observer)
    finally:
        observer.progress.close()
        executor.shutdown(wait=False, cancel_futures=True)
        if analyses is not None:
            analyses.shutdown(wait=False, cancel_futures=True)


def _chosen(result, strategy, out) -> list:
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
    return records


def _times(result, args, out) -> None:
    left = sum(len(outcome.not_measured) for outcome in result.outcomes)
    print(f"predict {result.t_predict_s:.1f} s, plan {result.t_plan_s:.1f} s, build "
          f"{result.t_build_s:.1f} s, measure "
          f"{result.t_measure_s:.1f} s, wall {result.wall_s:.1f} s"
          + (f"; {left} variant(s) not measured before the time limit: rerun to continue"
             if left else ""), file=out, flush=True)
    print(f"stored in {args.db or default_store()}: `hybridtune export SCENARIO --tuned --db "
          "FILE -o DIR` writes the tuned solver, `hybridtune report --db FILE -o DIR` the report",
          file=out, flush=True)


def _json(result, records: list, ended: list, failed) -> str:
    return json.dumps({"configurations": records, "complete": result.complete,
                       "without_choice": [{"configuration": title, "why": why}
                                          for title, why in ended],
                       "failures": {"analyses": failures_json(offline_failures(result.offline)),
                                    "measurements": failures_json(failed)},
                       "t_predict_s": result.t_predict_s, "t_plan_s": result.t_plan_s,
                       "t_build_s": result.t_build_s,
                       "t_measure_s": result.t_measure_s, "wall_s": result.wall_s,
                       "notes": list(result.notes), "load": load_json(records)}, indent=1)


def _finish(result, strategy, args) -> int:
    out = sys.stderr if args.json else sys.stdout
    records = _chosen(result, strategy, out)
    failed, measured = measurement_failures(result.outcomes)
    for line in failure_lines(failed, measured, "measurements"):
        print(line, file=out)
    _times(result, args, out)
    ended = without_choice(result.outcomes)
    if args.json:
        print(_json(result, records, ended, failed))
    if ended:
        print(without_choice_line(ended, len(result.outcomes), "no measured choice"), file=out,
              flush=True)
        return EXIT_NO_CHOICE
    return EXIT_OK if result.complete else EXIT_INCOMPLETE


def _dry_run(request: TuneRequest, args, launch) -> int:
    """What a run would analyse, build and measure, with an estimated cost; nothing runs or is
    written (the store, when it exists, is only read)."""
    plan = dry_run_plan(request, args.db, len(launch.nodes), launch.nodes[0].hardware_id)
    spelling = request.strategy.spelling
    print(f"dry run: nothing is analysed, built, measured or stored (store {plan.store})")
    print(f"  kerncraft analyses: {plan.analyses} (about {plan.analyses_s:.0f} s with "
          f"{plan.workers} workers); {plan.barrier_note}")
    for line in reservation_lines(request.spans, launch):
        print(line)
    if plan.analyses:
        for item in plan.unpredicted:
            print(f"  {configuration_title(item.configuration)}: shortlist known once "
                  f"predicted; {spelling} measures at most {item.most} of {item.pool}")
        usual = USUAL_SHARE.get(request.strategy.name)
        print(f"  measurements: at most {plan.measurements} (at most {plan.measure_s:.0f} s at "
              f"--budget {request.options.budget_s:g} on {plan.nodes} node(s), builds besides)"
              + (f"; {usual.format(spelling=spelling)}" if usual else ""))
        return EXIT_OK
    for tuning in plan.plans:
        print(f"  {configuration_title(tuning.configuration)}: {tuning.shortlist_words} "
              f"({spelling}): {len(tuning.reused)} in the store, {len(tuning.tasks)} to measure")
    print(f"  builds: {plan.builds} (about {plan.build_s:.0f} s); measurements: "
          f"{plan.measurements} (about {plan.measure_s:.0f} s at --budget "
          f"{request.options.budget_s:g} on {plan.nodes} node(s)); total about "
          f"{plan.total_s:.0f} s")
    return EXIT_OK


def tune_main(argv: list[str], parse, report_error) -> int:
    """Entry of `hybridtune tune` on every rank: rank 0 runs the command, the others serve it."""
    signals.install()
    try:
        launch = discover()
    except LaunchError as error:
        if os.environ.get("SLURM_PROCID", "0") == "0":
            report_error(error)
        return EXIT_BAD_INPUT
    if launch.rank != 0:
        try:
            return serve(launch)
        except Terminated as stop:
            os._exit(stop.code)
    return _rank_zero(argv, parse, report_error, launch)


def _rank_zero(argv: list[str], parse, report_error, launch) -> int:
    code = EXIT_BAD_INPUT
    try:
        args = parse(argv)
        code = cmd_tune(args, launch)
    except Terminated as stop:
        code = _stopped(stop)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else EXIT_BAD_INPUT
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
