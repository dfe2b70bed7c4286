"""`hybridtune measure`: generate, build, verify and time variants of a scenario, every result stored."""

from __future__ import annotations

import json
import sys

from hybridtune.commands.exit_codes import EXIT_NO_CHOICE, EXIT_OK
from hybridtune.commands.selection_arguments import add_selection
from hybridtune.pipeline.variant_measuring import (MeasureRequest, measure_plan,
                                                   plan_measurements, result_failures)
from hybridtune.report.failures import failure_lines, group_failures, without_choice_line
from hybridtune.report.tuning import plus_minus, where_measured


def add_arguments(measure) -> None:
    measure.add_argument("scenario")
    measure.add_argument("--variant", action="append", metavar="ID", help="variant id (repeatable; "
                         "default: the whole pool)")
    add_selection(measure, "the MPI skeletons run", "store to append the measurements to")
    measure.add_argument("--ci", type=float, default=0.02,
                         help="stop when the 95%% CI of the median is within this fraction")
    measure.add_argument("--budget", type=float, default=5.0, help="timing seconds per variant")
    measure.add_argument("--strict", action="store_true", help="refuse more threads than cores")
    measure.add_argument("--json", action="store_true")


def _result_line(result) -> str:
    time = f"{result.median_s:.4e} s/step {plus_minus(result.ci_rel)}" \
        if result.status == "ok" else result.message.splitlines()[0][:100]
    doubts = (result.hardware.get("load") or {}).get("doubts") or []
    return (f"{result.id} {where_measured(result.as_json())}: {result.status} "
            f"{time} ({result.repetitions} reps)"
            + (f"; UNRELIABLE: {'; '.join(doubts)}" if doubts else ""))


def run(args) -> int:
    plan = plan_measurements(MeasureRequest(args.scenario, args.variant, args.n, args.threads,
                                            args.ranks, args.ci, args.budget, args.strict,
                                            args.db))
    for warning in plan.warnings:
        print(warning, file=sys.stderr)
    shown = None if args.json else (lambda result: print(_result_line(result), flush=True))
    results, ended = measure_plan(plan, args.db, shown)
    if args.json:
        print(json.dumps([r.as_json() for r in results], indent=1))
    out = sys.stderr if args.json else sys.stdout
    for line in failure_lines(group_failures(result_failures(results)), len(results),
                              "measurements"):
        print(line, file=out)
    if ended:
        print(without_choice_line(ended, len(plan.configurations), "no variant measured ok"),
              file=out)
        return EXIT_NO_CHOICE
    return EXIT_OK
