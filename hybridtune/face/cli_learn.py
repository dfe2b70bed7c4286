"""`hybridtune train`, `evaluate` and the corrected predictions of `predict --corrected`: models fitted on the store, stored in it, used from it and scored out of sample."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.errors import RequestError

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


def read_frames(path: str, tables: tuple, machine_sha256: str | None = None) -> dict:
    """table -> frame of the store at path, read once and read-only; of the variant predictions
    only what learning reads (their kernel breakdowns are the largest part of a store). With a
    machine file's sha256: only the predictions whose stored feature row names it, and of the
    measurements only what learning reads."""
    from hybridtune.learn.table import MEASUREMENT_COLUMNS, PREDICTION_COLUMNS
    from hybridtune.store import Store
    if Path(path).is_dir():
        raise RequestError(f"--db {path}: expected a store file, found a directory")
    if not Path(path).is_file():
        raise RequestError(f"--db {path}: no such store")
    columns = {"variant_predictions": PREDICTION_COLUMNS}
    containing = {}
    if machine_sha256 is not None:
        columns["measurements"] = MEASUREMENT_COLUMNS
        containing["variant_predictions"] = ("features", machine_sha256)
    with Store.open(path, "r") as store:
        return {table: store.frame(table, columns.get(table), containing.get(table))
                for table in tables}


def read_rows(path: str, machine_sha256: str | None = None):
    """The store's learning rows (predictions with features joined to measurements) of one machine
    file (default: the one predicted with last), and the frames they came from with the models;
    read-only."""
    from hybridtune.learn.table import joined_rows
    frames = read_frames(path, ("variant_predictions", "measurements", "models", "runs"))
    return joined_rows(frames["variant_predictions"], frames["measurements"], machine_sha256,
                       runs=frames["runs"]), frames


def machine_rows(path: str, machine_sha256: str):
    """read_rows of one machine file, reading only its predictions and the measurement columns
    learning reads (everything, as read_rows does, where that finds no rows of the machine file,
    so the error names what the store holds)."""
    from hybridtune.learn.table import joined_rows
    frames = read_frames(path, ("variant_predictions", "measurements", "models", "runs"),
                         machine_sha256)
    try:
        return joined_rows(frames["variant_predictions"], frames["measurements"],
                           machine_sha256, runs=frames["runs"]), frames
    except RequestError:
        return read_rows(path, machine_sha256)


def machine_file_names(runs) -> dict:
    """machine file sha256 -> its path, as the runs that name one give it."""
    return {sha: path for sha, path in zip(runs.get("machine_sha256", []),
                                           runs.get("machine_file", [])) if path}


def cmd_train(args) -> int:
    from hybridtune.learn.persist import model_record
    from hybridtune.learn.train import MAX_ROWS, MIN_ROWS, fit
    from hybridtune.store import Store
    from hybridtune.face.cli_tuning import writable
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


def require_model(path: str | None, machine_sha256: str, option: str = "--corrected",
                  any_machine: bool = False) -> str:
    """The store's path; refuse `option` (--corrected, --prior), before anything is written,
    where the store has no model of this version's feature schema for the machine file (with
    any_machine: for any machine file, as a model of other hardware serves --prior)."""
    from hybridtune.describe.library import default_store
    from hybridtune.predict.features import FEATURE_SCHEMA
    from hybridtune.store import Store
    path = path or str(default_store())
    if not Path(path).exists():
        raise RequestError(f"{option}: no store {path} (its models come from `hybridtune "
                           f"train --db {path}`)")
    with Store.open(path, "r") as store:
        models = store.frame("models", ("machine_sha256", "feature_schema"))
    machines = models["machine_sha256"] if not models.empty else models.assign(
        machine_sha256=[])["machine_sha256"]
    if any_machine and not models.empty and (models["feature_schema"] == FEATURE_SCHEMA).any():
        return path
    if not (machines == machine_sha256).any():
        others = sorted({sha[:12] for sha in machines})
        advice = (f"; it has models of machine file(s) {', '.join(others)}: run `hybridtune "
                  f"train --db {path} --machine FILE` with the scenario's machine file first"
                  if others else f": run `hybridtune train --db {path}` first")
        raise RequestError(f"{option}: the store {path} has no model for machine file "
                           f"{machine_sha256[:12]}{advice}")
    schemas = set(models["feature_schema"][machines == machine_sha256])
    if FEATURE_SCHEMA not in schemas:
        raise RequestError(f"{option}: the store {path} has models of feature schema "
                           f"{', '.join(sorted(map(str, schemas)))}; this version's is "
                           f"{FEATURE_SCHEMA}: run `hybridtune train --db {path}` again")
    return path


def prepared_corrections(path: str, machine_sha256: str) -> tuple:
    """What corrections need of the store: the rows of a machine file and its latest model
    (rebuilt); an error naming `hybridtune train` where there is no model."""
    from hybridtune.learn.persist import latest_models, load_model
    rows, frames = machine_rows(path, machine_sha256)
    stored = latest_models(frames["models"], rows.machine_sha256)
    record = stored.get("gp") or stored.get("linear")
    if record is None:
        raise RequestError(f"--corrected: the store {path} has no model for machine file "
                           f"{rows.machine_sha256[:12]}: run `hybridtune train --db {path}` first")
    return record["model_id"], load_model(record, rows), rows.frame


def corrections_of(prepared: tuple, configurations) -> tuple[str, dict]:
    """The model used (its description) and, per configuration (method, IVP, n, ranks, threads),
    variant -> Corrected."""
    from hybridtune.learn.correct import corrected_times
    from hybridtune.learn.table import Z95
    model_id, fitted, frame = prepared
    out = {}
    for method, ivp, n, ranks, threads in configurations:
        mine = frame[(frame["method"] == method) & (frame["ivp"] == ivp) & (frame["n"] == n)
                     & (frame["ranks"] == ranks) & (frame["threads"] == threads)]
        out[(method, ivp, n, ranks, threads)] = {item.variant: item
                                                 for item in corrected_times(fitted, mine)}
    note = f"{fitted.kind} model {model_id[:12]} fitted on {len(fitted.row_ids)} measured variants"
    if any(key[3] > 1 for key in configurations):
        trained = frame[frame["row_id"].isin(set(fitted.row_ids))]
        note += (f" ({int((trained['ranks'] > 1).sum())} of them on more than one rank: with "
                 "none, a multi-rank variant's correction is the model's prior, its interval wide)")
    if fitted.offset_spread:
        factor = math.exp(Z95 * fitted.offset_spread)
        note += ("; on a configuration it was trained on the intervals are its own; elsewhere "
                 "they hold its error on an IVP it has not measured, most of it (a factor of "
                 f"about {factor:.1f} either way) common to all variants of a configuration, so "
                 "their order is surer than the intervals' width")
    return note, out


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
    from hybridtune.strategies.evaluate import evaluate
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
    from hybridtune.face.evaluation_text import (evaluation_lines, feature_set_lines,
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
    from hybridtune.strategies.evaluate import regime_errors
    from hybridtune.learn.table import joined_rows, machine_files
    predictions, measurements = frames["variant_predictions"], frames["measurements"]
    names = machine_file_names(frames["runs"])
    return {sha: {"machine_file": names.get(sha, ""),
                  "regimes": regime_errors(joined_rows(predictions, measurements, sha,
                                                       runs=frames["runs"]))}
            for sha in machine_files(predictions)}
