"""`hybridtune train`, `evaluate` and `predict --corrected`: the correction models' commands.

Models are fitted on the store, stored in it, used from it and scored out of sample.
"""

from __future__ import annotations

import json
import sys

from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.errors import RequestError
from hybridtune.pipeline.store_frames import machine_file_names, read_frames, read_rows

NOISE_SEEDS = 20        # evaluate: noise draws every strategy is replayed under
SHARE_SEEDS = 3         # and the sample-share replays (each share trains its own models)


def add_arguments(sub) -> None:
    train = sub.add_parser("train", help="fit the correction models on the store's measurements "
                           "and store them")
    train.add_argument("--db", required=True, metavar="FILE", help="the store to learn from")
    train.add_argument("--kind", action="append", choices=("linear", "gp"),
                       help="model kind (repeatable; default: both)")
    train.add_argument("--max-rows", type=int, default=None, metavar="N",
                       help="rows a model is fitted on at most (stratified subsample; default "
                            "2000)")
    train.add_argument("--machine", metavar="FILE", help="the machine file whose predictions "
                       "to learn from (default: the one the store predicted with last)")
    train.add_argument("--json", action="store_true")
    evaluate = sub.add_parser("evaluate", help="replay the strategies on measured pools and score "
                              "the models, each IVP left out of training in turn")
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
                          "(hybrid on one host with the other's model as its prior)")
    evaluate.add_argument("--feature-sets", action="store_true", help="also: the IVP (and, with "
                          "--other-host, the machine) characteristics offered to the model, judged "
                          "by leaving one IVP (one host) out")
    evaluate.add_argument("--no-strategies", action="store_true", help="skip the replay of the "
                          "strategies on --db (with --other-host or --feature-sets)")
    evaluate.add_argument("--json", action="store_true")






def cmd_train(args) -> int:
    from hybridtune.learn.persist import model_record
    from hybridtune.learn.train import MAX_ROWS, MIN_ROWS, fit
    from hybridtune.store import Store
    from hybridtune.commands.predict_command import writable
    writable(args.db)
    max_rows = MAX_ROWS if args.max_rows is None else args.max_rows
    if max_rows < MIN_ROWS:
        raise RequestError(f"--max-rows {max_rows}: expected a count >= {MIN_ROWS} (the fewest "
                           "rows a model is fitted on)")
    from hybridtune.learn.table import machine_files
    machine = None
    if args.machine:
        from hybridtune.describe.loader import load
        machine = load(args.machine, "machine").sha256
    rows, frames = read_rows(args.db, machine)
    others = [sha[:12] for sha in machine_files(frames["variant_predictions"])
              if sha != rows.machine_sha256]
    fitted = [fit(rows, kind, max_rows) for kind in args.kind or ("linear", "gp")]
    records = [model_record(f) for f in fitted]
    run = {"command": "train", "argv": sys.argv[1:], "machine_sha256": rows.machine_sha256}
    with Store.open(args.db, "a", run=run) as store:
        store.append_many("models", records)
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "training"} for r in records],
                         indent=1))
        return 0
    for model, record in zip(fitted, records):
        params = record["params"]
        kernel = (f"; kernel {params['constant']:.3g} * Matern(length {params['length_scale']:.3g}, "
                  f"nu {params['hyper']['nu']}) + white {params['noise_level']:.3g}"
                  if model.kind == "gp" else f"; residual spread {params['residual_std']:.3g}")
        sampled = (f"a stratified sample of {len(model.row_ids)} of {model.available_rows} "
                   "measured variants (by IVP, size regime and threads)"
                   if len(model.row_ids) < model.available_rows
                   else f"all {len(model.row_ids)} measured variants")
        print(f"{model.kind}: fitted on {sampled} of hardware {model.hardware_id[:12]}, "
              f"{len(model.encoding.names)} features{kernel}; in-sample R^2 "
              f"{model.score['r2_in_sample']:.2f}; {model.seconds:.1f} s; model {record['model_id']}")
    print(f"stored in {args.db} (machine file {rows.machine_sha256[:12]}, feature schema "
          f"{rows.feature_schema})")
    if others:
        print(f"the store also holds predictions of machine file(s) {', '.join(others)}: "
              "train on one with --machine FILE")
    return 0





def corrected_lines(configuration, predictions, corrected: dict, head: int) -> list[str]:
    """A configuration's variants ordered by corrected time, with the offline prediction and the
    95% interval."""
    c = configuration
    items = sorted(corrected.values(), key=lambda item: item.corrected_s)
    layout = f"threads={c.threads}" + (f" ranks={c.ranks}" if c.ranks > 1 else "")
    lines = [f"{c.method.name} {c.ivp.name} n={c.n} {layout}: {len(items)} variants "
             f"by corrected time (95% interval; offline prediction)"]
    for rank, item in enumerate(items[:head], start=1):
        lines.append(f"  {rank:3d}. {item.variant}  {item.corrected_s:.4e} s "
                     f"[{item.low_s:.3e}, {item.high_s:.3e}]  (offline {item.predicted_s:.4e} s)")
    if len(items) > head:
        lines.append(f"  ... {len(items) - head} more")
    return lines


def cmd_evaluate(args) -> int:
    from hybridtune.strategies.leave_one_out import evaluate
    if not 0 < args.stop <= 1000:
        raise RequestError(f"--stop {args.stop:g}: expected the number of faster variants hybrid "
                           "stops below, above 0")
    if args.noise_seeds < 0:
        raise RequestError(f"--noise-seeds {args.noise_seeds}: expected 0 (no noise) or more")
    if args.no_strategies and not (args.other_host or args.feature_sets):
        raise RequestError("--no-strategies: expected --other-host or --feature-sets beside it "
                           "(else there is nothing to evaluate)")
    shares = _shares(args.sample_shares)
    host = _host(args.db, args.noise_seeds)
    other = _host(args.other_host, args.noise_seeds) if args.other_host else None
    rows, noise = host["host"].rows, host["noise"]
    out: dict = {}
    result, regimes, valued = None, {}, []
    if not args.no_strategies:
        result = evaluate(rows, args.stop, with_tpe=args.tpe, noise=noise, seeds=args.noise_seeds)
        regimes = offline_by_machine(host["frames"])
        if shares:
            from hybridtune.strategies.teaching import share_value
            valued = share_value(rows, shares, noise, min(args.noise_seeds, SHARE_SEEDS), args.stop)
        out.update({"strategies": result.strategies, "accuracy": result.accuracy,
                    "noise": result.noise, "first_pick_within_5pct": result.first_pick,
                    "hybrid_measured_to_within_3pct": result.hybrid_to_best,
                    "reliability": result.reliability, "offline_errors": result.offline_errors,
                    "transfer": result.transfer, "configurations": result.configurations,
                    "curves": result.curves, "offline_by_regime": regimes,
                    "sample_shares": valued, "notes": result.notes})
    from hybridtune.strategies import host_transfer as hosts
    from hybridtune.strategies.noise import pass_agreement
    out["pass_agreement"] = pass_agreement(host["frames"]["measurements"])
    if args.feature_sets:
        out["feature_sets"] = {"leave_one_ivp_out": hosts.feature_set_comparison(
            rows, ((), ("ivp",)))}
        if other is not None:
            out["feature_sets"]["leave_one_host_out"] = hosts.host_feature_comparison(
                host["host"], other["host"], ((), ("machine",), ("ivp",), ("ivp", "machine")))
    if other is not None:
        out["hosts"] = hosts.host_transfer(host["host"], other["host"], noise, other["noise"],
                                           max(1, args.noise_seeds), args.stop)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    from hybridtune.commands.evaluation_text import (evaluation_lines, feature_set_lines,
                                                 host_transfer_lines, pass_agreement_lines,
                                                 regime_lines, share_lines)
    lines = [] if result is None else \
        evaluation_lines(result) + regime_lines(regimes) + share_lines(valued)
    lines += pass_agreement_lines(out["pass_agreement"])
    lines += feature_set_lines(out.get("feature_sets", {}))
    lines += host_transfer_lines(out.get("hosts"))
    print("\n".join(lines))
    return 0


def _host(path: str, noise_seeds: int) -> dict:
    """A ground-truth store read for evaluate: its frames, rows named by their hardware, noise."""
    from hybridtune.learn.table import hardware_name, joined_rows
    from hybridtune.strategies.host_transfer import Host
    from hybridtune.strategies.noise import measured
    frames = read_frames(path, ("variant_predictions", "measurements", "runs"))
    rows = joined_rows(frames["variant_predictions"], frames["measurements"], runs=frames["runs"])
    return {"frames": frames, "host": Host(hardware_name(frames["measurements"]) or path, rows),
            "noise": measured(frames["measurements"]) if noise_seeds else None}


def _shares(text: str | None) -> list[float]:
    if text is None:
        return []
    try:
        shares = [float(part) for part in text.split(",")]
    except ValueError:
        shares = []
    if not shares or not all(0 <= s < 1 for s in shares):
        raise RequestError(f"--sample-shares {text}: expected shares 0 <= S < 1 separated by "
                           "commas, such as 0,0.25,0.5")
    return shares


def offline_by_machine(frames: dict) -> dict:
    """Per machine file the store predicted with (named by its runs): the offline model's error
    per size regime; before and after a change to the machine file, for instance."""
    from hybridtune.strategies.leave_one_out import regime_errors
    from hybridtune.learn.table import joined_rows, machine_files
    predictions, measurements = frames["variant_predictions"], frames["measurements"]
    names = machine_file_names(frames["runs"])
    return {sha: {"machine_file": names.get(sha, ""),
                  "regimes": regime_errors(joined_rows(predictions, measurements, sha,
                                                       runs=frames["runs"]))}
            for sha in machine_files(predictions)}
