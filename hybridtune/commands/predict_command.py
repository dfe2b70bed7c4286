"""`hybridtune predict`: a scenario's pool ranked by offline prediction, or by the corrected time."""

from __future__ import annotations

import json
import sys

from hybridtune.commands.exit_codes import EXIT_NO_CHOICE, EXIT_OK
from hybridtune.commands.offline_text import (corrected_lines, offline_failures, offline_summary,
                                              unranked_causes)
from hybridtune.commands.selection_arguments import add_selection
from hybridtune.errors import RequestError
from hybridtune.pipeline.offline_prediction import (PredictRequest, Prediction,
                                                    configuration_key, load_checked, predict,
                                                    predict_dry_run)
from hybridtune.pipeline.request_checks import check_selection
from hybridtune.pipeline.tune_dry_run import SECONDS_PER_ANALYSIS
from hybridtune.report.failures import failure_lines, failures_json, without_choice_line
from hybridtune.report.ranking import configuration_title, ranking_json, ranking_lines
from hybridtune.strategies.registry import shortlist


def add_arguments(predict_parser) -> None:
    predict_parser.add_argument("scenario")
    add_selection(predict_parser)
    predict_parser.add_argument("--head", type=int, default=10, help="ranked variants shown per "
                                "configuration (default 10)")
    predict_parser.add_argument("--workers", type=int, help="parallel kerncraft analyses "
                                "(default: cores)")
    predict_parser.add_argument("--json", action="store_true", help="print one JSON object: each "
                                "configuration's ranking and the failed analyses (with --scaling: "
                                "the curves)")
    predict_parser.add_argument("--corrected", action="store_true", help="order by the corrected "
                                "time of the store's trained model, with its 95%% interval (needs "
                                "train)")
    predict_parser.add_argument("--dry-run", action="store_true", help="print the kerncraft "
                                "analyses that would run and what the store's predictions already "
                                "rank; analyse and write nothing")


def check_arguments(args) -> None:
    """The selection, shown count and --dry-run's company, before anything is read."""
    check_selection(args.n, args.threads, args.ranks, args.head)


def check_dry_run(args) -> None:
    if args.dry_run and (args.scaling or args.corrected):
        raise RequestError("--dry-run ranks by the offline model alone: drop --scaling and "
                           "--corrected")


def _request(args) -> PredictRequest:
    return PredictRequest(args.scenario, args.n, args.threads, args.ranks, args.db, args.workers,
                          args.corrected)


def run(args) -> int:
    """predict once its arguments are checked (check_arguments, check_dry_run)."""
    request = _request(args)
    scenario = load_checked(request)
    if args.dry_run:
        return _dry_run(request, scenario, args)
    prediction = predict(request, scenario)
    records = [_shown(ranking, prediction, args) for ranking in prediction.result.rankings]
    return _summary(prediction, records, args)


def _record(ranking, picked) -> dict:
    config = ranking.configuration
    return {"method": config.method.name, "ivp": config.ivp.name, "n": config.n,
            "threads": config.threads, "ranks": config.ranks,
            "variants": ranking_json(list(ranking.predictions), picked)}


def _shown(ranking, prediction: Prediction, args) -> dict | None:
    """A configuration's ranking printed, or its JSON record returned (--json)."""
    picked = shortlist(prediction.scenario.strategy, ranking.predictions)
    config = ranking.configuration
    mine = (prediction.corrected or {}).get(configuration_key(config))
    if args.json:
        record = _record(ranking, picked)
        for variant in record["variants"] if args.corrected else ():
            item = mine.get(variant["id"])
            variant["corrected"] = None if item is None else {
                "seconds": item.corrected_s, "low_s": item.low_s, "high_s": item.high_s,
                "measured_s": item.measured_s}
        return record
    if args.corrected:
        print("\n".join(corrected_lines(config, ranking.predictions, mine, args.head)))
    else:
        print("\n".join(ranking_lines(config, list(ranking.predictions), picked, args.head)))
    return None


def _summary(prediction: Prediction, records: list, args) -> int:
    result = prediction.result
    unranked = unranked_causes(result.rankings)
    if args.json:
        print(json.dumps({"configurations": records,
                          "failures": failures_json(offline_failures(result))}, indent=1))
        lines = failure_lines(offline_failures(result), result.loops, "kerncraft analyses")
    else:
        lines = [offline_summary(prediction.scenario, result)] + (
            [f"corrected by the {prediction.note}"] if prediction.note else [])
    if unranked:
        lines.append(without_choice_line(unranked, len(result.rankings), "no ranked variant"))
    for line in lines:
        print(line, file=sys.stderr if args.json else sys.stdout)
    return EXIT_NO_CHOICE if unranked else EXIT_OK


def _dry_run(request: PredictRequest, scenario, args) -> int:
    """The kerncraft analyses predict would run, and the rankings of the configurations the
    store's kernel predictions already cover; nothing is analysed or written."""
    dry = predict_dry_run(request, scenario)
    result = dry.result
    out = sys.stderr if args.json else sys.stdout
    print(f"dry run: nothing is analysed or stored (store {dry.store})", file=out)
    print(f"  kerncraft analyses: {result.missing} (about "
          f"{result.missing * SECONDS_PER_ANALYSIS / dry.workers:.0f} s with {dry.workers} "
          f"workers); {result.barrier_note}", file=out)
    records = []
    for ranking in result.rankings:
        if result.missing:
            print(f"  {configuration_title(ranking.configuration)}: {len(ranking.predictions)} "
                  "variants, ranked once their kernels are analysed", file=out)
            continue
        picked = shortlist(scenario.strategy, ranking.predictions)
        if args.json:
            records.append(_record(ranking, picked))
        else:
            print("\n".join(ranking_lines(ranking.configuration, list(ranking.predictions),
                                          picked, args.head)))
    if args.json:
        print(json.dumps({"configurations": records, "analyses": result.missing}, indent=1))
    return EXIT_OK
