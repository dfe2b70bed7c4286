"""`hybridtune measure`: generate, build, verify and time variants of a scenario, every result stored."""

from __future__ import annotations

import json
import sys

from hybridtune.commands.predict_command import EXIT_NO_CHOICE, check_step_budget, check_timing, open_store


def cmd_measure(args) -> int:
    from hybridtune.measure.runner import MeasureOptions
    from hybridtune.describe.configuration import configurations, runnable
    from hybridtune.describe.loader import load
    from hybridtune.generate.pool import select_variants
    from hybridtune.measure.tasks import (layout_cores_problem, measure_configuration,
                                          thread_problems)
    from hybridtune.errors import RequestError
    from hybridtune.report.failures import (every_failed, failure_lines, group_failures,
                                            without_choice_line)
    from hybridtune.report.ranking import configuration_title
    from hybridtune.report.tuning import where_measured
    check_timing(args)
    for flag, counts in (("--threads", args.threads), ("--ranks", args.ranks)):
        if counts and min(counts) < 1:
            raise RequestError(f"{flag}: expected counts >= 1, got {min(counts)}")
    scenario = load(args.scenario, "scenario")
    configs = list(configurations(scenario, args.n, args.threads, args.ranks))
    check_step_budget(configs, scenario.machine, args.budget)
    skeletons = {s.name: s for s in scenario.skeletons}
    chosen = {m.name: select_variants(scenario, m, args.variant) for m in scenario.methods}
    runs = [(config, *runnable(skeletons, config, chosen[config.method.name]))
            for config in configs]
    if layout_cores_problem(configs):
        raise RequestError(layout_cores_problem(configs))
    problems = thread_problems(sorted({c.threads for c in configs}))
    if problems and args.strict:
        raise RequestError("; ".join(problems) + " (--strict)")
    for problem in problems:
        print(f"warning: {problem}; timings will be oversubscribed", file=sys.stderr)
    for config, _, notes in runs:
        for note in notes:
            print(f"{configuration_title(config)}: {note}", file=sys.stderr)
    options = MeasureOptions(ci_target=args.ci, budget_s=args.budget)

    def show(result):
        if not args.json:
            time = f"{result.median_s:.4e} s/step +-{100 * result.ci_rel:.1f}%" \
                if result.status == "ok" else result.message.splitlines()[0][:100]
            doubts = (result.hardware.get("load") or {}).get("doubts") or []
            print(f"{result.id} {where_measured(result.as_json())}: {result.status} "
                  f"{time} ({result.repetitions} reps)"
                  + (f"; UNRELIABLE: {'; '.join(doubts)}" if doubts else ""), flush=True)

    results, ended = [], []
    with open_store(args.db, scenario, "measure") as store:
        def keep(result):
            store.append_many("measurements", [result.as_row()])
            show(result)

        for config, variants, _ in runs:
            measured = measure_configuration(scenario, config, variants, options, on_result=keep)
            results += measured
            if not any(r.status == "ok" for r in measured):
                ended.append((configuration_title(config),
                              every_failed(_failures(measured), "variant")))
    if args.json:
        print(json.dumps([r.as_json() for r in results], indent=1))
    out = sys.stderr if args.json else sys.stdout
    for line in failure_lines(group_failures(_failures(results)), len(results), "measurements"):
        print(line, file=out)
    if ended:
        print(without_choice_line(ended, len(configs), "no variant measured ok"), file=out)
        return EXIT_NO_CHOICE
    return 0


def _failures(results) -> list[tuple[str, str]]:
    return [(r.id, f"{r.status}: {r.message}") for r in results if r.status != "ok"]
