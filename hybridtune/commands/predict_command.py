"""The offline commands (`predict`, `machine probe`), the checks `tune` shares, the store they open."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from hybridtune.errors import HybridtuneError, RequestError

EXIT_NO_CHOICE = 4      # a configuration ended without a ranked (predict) or measured (tune) choice


GROUND_TRUTH_CAMPAIGN = "HYBRIDTUNE_GROUND_TRUTH_CAMPAIGN"    # set by jobs/groundtruth.sh alone


def writable(path: str | None) -> Path:
    """A store this command may write: any but the shipped ground truth's (data/groundtruth/),
    which only its own campaign script writes."""
    from hybridtune.describe.library import PROJECT_ROOT, default_store
    target = Path(path) if path else default_store()
    shipped = (PROJECT_ROOT / "data" / "groundtruth").resolve()
    if shipped in target.resolve().parents and not os.environ.get(GROUND_TRUTH_CAMPAIGN):
        raise RequestError(f"--db {path}: expected a store outside {shipped}, which only "
                           "jobs/groundtruth.sh writes; copy the file to write into it, or give "
                           "it as --prior to use its model (read-only)")
    return target


def open_store(path: str | None, scenario, command: str, extra: dict | None = None):
    """The store in append mode with this command's run record (every command that writes one)."""
    from hybridtune.compiler.build import FLAGS, compiler
    from hybridtune.store import Store
    target = writable(path)
    if not target.parent.is_dir():
        if path:
            raise HybridtuneError(f"--db {path}: expected an existing folder {target.parent}")
        target.parent.mkdir(parents=True, exist_ok=True)
    machine = scenario.machine if scenario is not None else None
    run = {"command": command, "argv": sys.argv[1:],
           "machine_file": machine.path if machine else "",
           "machine_sha256": machine.sha256 if machine else "",
           "compiler": compiler(), "compiler_flags": " ".join(FLAGS), "extra": extra or {}}
    return Store.open(target, "a", run=run)


def check_timing(args) -> None:
    """--ci and --budget of the commands that measure."""
    if not 0 < args.ci < 1:
        raise RequestError(f"--ci {args.ci:g}: expected a fraction in (0, 1)")
    if not args.budget > 0:
        raise RequestError(f"--budget {args.budget:g}: expected seconds > 0")


def check_step_budget(configs: list, machine, budget_s: float) -> None:
    """Refuse sizes one step of which is estimated to outlast a variant's whole timing budget
    (predict/step_estimate: operation counts at one operation per cycle), before anything runs."""
    from hybridtune.predict.step_estimate import over_budget
    found = over_budget(configs, machine, budget_s)
    if found:
        listed = "; ".join(f"IVP {c.ivp.name} ({c.ivp.path}) at n = {c.n}: about {seconds:.3g} s"
                           for c, seconds in found[:5])
        raise RequestError(
            f"one step is estimated to take longer than --budget {budget_s:g} s: {listed}"
            f"{' and more' if len(found) > 5 else ''} (operation counts at one operation per "
            "cycle of the machine file's clock); give a smaller -n or a larger --budget")


def check_selection(args) -> None:
    for flag, counts in (("--threads", args.threads), ("--ranks", args.ranks)):
        if counts and min(counts) < 1:
            raise RequestError(f"{flag}: expected counts >= 1, got {min(counts)}")
    if args.n is not None and args.n < 1:
        raise RequestError(f"-n: expected a size >= 1, got {args.n}")
    if getattr(args, "head", 1) < 0:
        raise RequestError(f"--head: expected a count >= 0, got {args.head}")


def cmd_predict(args) -> int:
    from hybridtune.describe.loader import load
    from hybridtune.describe.configuration import configurations
    from hybridtune.pipeline.offline_stages import predict_scenario
    from hybridtune.strategies.registry import shortlist
    from hybridtune.report.failures import failure_lines, failures_json, without_choice_line
    from hybridtune.report.ranking import ranking_json, ranking_lines
    from hybridtune.predict.kerncraft_adapter import check_compiler
    check_selection(args)
    from hybridtune.commands.plan_command import check_predict_arguments, cmd_scaling
    check_predict_arguments(args)
    if args.dry_run and (args.scaling or args.corrected):
        raise RequestError("--dry-run ranks by the offline model alone: drop --scaling and "
                           "--corrected")
    if args.scaling:
        return cmd_scaling(args)
    scenario = load(args.scenario, "scenario")
    check_compiler(scenario.machine)
    list(configurations(scenario, args.n, args.threads, args.ranks))   # refused before any write
    if args.dry_run:
        return _predict_dry_run(scenario, args)
    corrected, note = {}, ""
    worker = contextlib.nullcontext()
    if args.corrected:
        from hybridtune.pipeline.corrections import require_model
        from hybridtune.pipeline.correction_worker import CorrectionWorker
        worker = CorrectionWorker(require_model(args.db, scenario.machine.sha256),
                                  scenario.machine.sha256)
    with worker:
        with open_store(args.db, scenario, "predict") as store:
            result = predict_scenario(scenario, args.n, args.threads, store, args.workers,
                                      ranks=args.ranks)
        if args.corrected:
            note, corrected = worker.corrections(
                [(r.configuration.method.name, r.configuration.ivp.name, r.configuration.n,
                  r.configuration.ranks, r.configuration.threads) for r in result.rankings],
                result.new_rankings > 0)
    out = []
    for ranking in result.rankings:
        picked = shortlist(scenario.strategy, ranking.predictions)
        config = ranking.configuration
        mine = corrected.get((config.method.name, config.ivp.name, config.n, config.ranks,
                              config.threads))
        if args.json:
            record = {"method": config.method.name, "ivp": config.ivp.name, "n": config.n,
                      "threads": config.threads, "ranks": config.ranks,
                      "variants": ranking_json(list(ranking.predictions), picked)}
            if args.corrected:
                for variant in record["variants"]:
                    item = mine.get(variant["id"])
                    variant["corrected"] = None if item is None else {
                        "seconds": item.corrected_s, "low_s": item.low_s, "high_s": item.high_s}
            out.append(record)
        elif args.corrected:
            from hybridtune.commands.learn_command import corrected_lines
            print("\n".join(corrected_lines(config, ranking.predictions, mine, args.head)))
        else:
            print("\n".join(ranking_lines(ranking.configuration, list(ranking.predictions), picked,
                                           args.head)))
    unranked = unranked_causes(result.rankings)
    if args.json:
        print(json.dumps({"configurations": out,
                          "failures": failures_json(offline_failures(result))}, indent=1))
        lines = failure_lines(offline_failures(result), result.loops, "kerncraft analyses")
    else:
        lines = [offline_summary(scenario, result)] + ([f"corrected by the {note}"] if note else [])
    if unranked:
        lines.append(without_choice_line(unranked, len(result.rankings), "no ranked variant"))
    for line in lines:
        print(line, file=sys.stderr if args.json else sys.stdout)
    return EXIT_NO_CHOICE if unranked else 0


def _predict_dry_run(scenario, args) -> int:
    """The kerncraft analyses predict would run, and the rankings of the configurations the
    store's kernel predictions already cover; nothing is analysed or written (the store, when it
    exists, is only read)."""
    from hybridtune.describe.library import default_store
    from hybridtune.pipeline.offline_stages import predict_scenario
    from hybridtune.pipeline.tuning_run import SECONDS_PER_ANALYSIS
    from hybridtune.report.ranking import configuration_title, ranking_lines
    from hybridtune.store import Store
    from hybridtune.strategies.registry import shortlist
    path = args.db or str(default_store())
    workers = args.workers or len(os.sched_getaffinity(0))
    store = Store.open(path, "r") if os.path.exists(path) else None
    try:
        result = predict_scenario(scenario, args.n, args.threads, store, workers, dry_run=True,
                                  ranks=args.ranks)
    finally:
        if store is not None:
            store.close()
    out = sys.stderr if args.json else sys.stdout
    print(f"dry run: nothing is analysed or stored (store {path})", file=out)
    print(f"  kerncraft analyses: {result.missing} (about "
          f"{result.missing * SECONDS_PER_ANALYSIS / workers:.0f} s with {workers} workers); "
          f"{result.barrier_note}", file=out)
    records = []
    for ranking in result.rankings:
        config = ranking.configuration
        if result.missing:
            print(f"  {configuration_title(config)}: {len(ranking.predictions)} variants, ranked "
                  "once their kernels are analysed", file=out)
            continue
        picked = shortlist(scenario.strategy, ranking.predictions)
        if args.json:
            from hybridtune.report.ranking import ranking_json
            records.append({"method": config.method.name, "ivp": config.ivp.name, "n": config.n,
                            "threads": config.threads, "ranks": config.ranks,
                            "variants": ranking_json(list(ranking.predictions), picked)})
        else:
            print("\n".join(ranking_lines(config, list(ranking.predictions), picked, args.head)))
    if args.json:
        print(json.dumps({"configurations": records, "analyses": result.missing}, indent=1))
    return 0


def offline_failures(result) -> list:
    """The kerncraft analyses that failed, grouped by cause."""
    from hybridtune.report.failures import group_failures
    return group_failures(("/".join(part for part in names[0].split("/") if part), message)
                          for names, message in result.failed_loops)


def unranked_causes(rankings) -> list[tuple[str, str]]:
    """(configuration, why) of each ranking with no variant ranked."""
    from hybridtune.report.ranking import configuration_title, unranked_why
    whys = [(configuration_title(r.configuration), unranked_why(r.predictions)) for r in rankings]
    return [(title, why) for title, why in whys if why is not None]


def offline_summary(scenario, result) -> str:
    from hybridtune.report.failures import failure_lines
    lines = [f"machine {scenario.machine.name} ({scenario.machine_note}); model {scenario.model}; "
             f"{result.loops} distinct loops, {result.analyses} kerncraft analyses this run "
             f"(kerncraft {result.versions.get('kerncraft')}, OSACA {result.versions.get('osaca')}); "
             f"{result.new_rankings} of {len(result.rankings)} rankings new to the store",
             result.barrier_note]
    if result.target_note:
        lines.append(f"warning: {result.target_note}")
    failed = failure_lines(offline_failures(result), result.loops, "kerncraft analyses")
    if failed:
        lines += failed + ["the variants built from these loops are not ranked; the store and "
                           "--json hold every message"]
    return "\n".join(lines)


def cmd_machine(args) -> int:
    from hybridtune.probe.machine_file import write_machine_file
    from hybridtune.probe.machine_probe import probe_machine, probe_summary
    target = Path(args.output)
    if target.is_dir() or not (target.parent if str(target.parent) else Path(".")).is_dir():
        raise HybridtuneError(f"-o {args.output}: expected a file path in an existing folder")
    mapping = probe_machine()
    write_machine_file(target, mapping)
    print(f"wrote {target}: {mapping.get('model name')}, {mapping.get('clock')}, "
          f"in-core model {dict(mapping.get('in-core model', {}))}")
    for line in probe_summary(mapping)[1:]:
        print(line)
    return 0
