"""`hybridtune evaluate`: the strategies replayed on measured pools, the models scored out of sample."""

from __future__ import annotations

import json
from dataclasses import replace

from hybridtune.commands.evaluation_text import (constants_lines, evaluation_lines,
                                                 feature_set_lines,
                                                 host_transfer_lines, pass_agreement_lines,
                                                 regime_lines, share_lines)
from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.errors import RequestError
from hybridtune.pipeline.evaluation_run import EvaluationRequest, check_evaluation, run_evaluation

NOISE_SEEDS = 20        # noise draws every strategy is replayed under


def add_arguments(evaluate) -> None:
    evaluate.add_argument("--db", required=True, metavar="FILE", help="the ground-truth store")
    evaluate.add_argument("--stop", type=float, default=HYBRID_STOP, metavar="E",
                          help="hybrid stops when fewer than E variants are expected 3%% faster "
                               "than the best held")
    evaluate.add_argument("--tpe", action="store_true", help="replay Optuna's TPE too, at "
                          "hybrid's mean count (the optional extra hybridtune[tpe])")
    evaluate.add_argument("--noise-seeds", type=int, default=NOISE_SEEDS, metavar="S",
                          help="replay every strategy under S draws of the measured run-to-run "
                               f"noise (default {NOISE_SEEDS}; 0: the stored times as they are)")
    evaluate.add_argument("--sample-shares", metavar="S,S,...", help="also: what a space-"
                          "filling share S of the training runs' measurements (preselect:5+"
                          "sample:S) buys in model accuracy and in hybrid's later runs")
    evaluate.add_argument("--other-host", metavar="STORE", help="also: leave one host and one "
                          "IVP out, both ways between --db and this ground truth of other hardware "
                          "(hybrid on one host with the other's model as its prior, and without a "
                          "model with the other's kernel effects, its own and both hosts')")
    evaluate.add_argument("--feature-sets", action="store_true", help="also: the IVP (and, with "
                          "--other-host, the machine) characteristics offered to the model, judged "
                          "by leaving one IVP (one host) out")
    evaluate.add_argument("--constants", action="store_true", help="also (with --other-host): "
                          "hybrid's trained scale and stop chosen on each ground truth and scored "
                          "on the other")
    evaluate.add_argument("--no-strategies", action="store_true", help="skip the replay of the "
                          "strategies on --db (with --other-host or --feature-sets)")
    evaluate.add_argument("--json", action="store_true")


def _shares(text: str | None) -> tuple:
    if text is None:
        return ()
    try:
        shares = [float(part) for part in text.split(",")]
    except ValueError:
        shares = []
    if not shares or not all(0 <= s < 1 for s in shares):
        raise RequestError(f"--sample-shares {text}: expected shares 0 <= S < 1 separated by "
                           "commas, such as 0,0.25,0.5")
    return tuple(shares)


def run(args) -> int:
    request = EvaluationRequest(args.db, args.stop, args.tpe, args.noise_seeds, (),
                                args.other_host, args.feature_sets, not args.no_strategies,
                                args.constants)
    check_evaluation(request)
    evaluation = run_evaluation(replace(request, sample_shares=_shares(args.sample_shares)))
    out = evaluation.document
    if args.json:
        print(json.dumps(out, indent=1))
        return EXIT_OK
    lines = [] if evaluation.result is None else (evaluation_lines(evaluation.result)
                                                  + regime_lines(evaluation.regimes)
                                                  + share_lines(evaluation.valued))
    lines += pass_agreement_lines(out["pass_agreement"])
    lines += feature_set_lines(out.get("feature_sets", {}))
    lines += host_transfer_lines(out.get("hosts"))
    lines += constants_lines(out.get("constants"))
    print("\n".join(lines))
    return EXIT_OK
