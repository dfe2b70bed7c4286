"""`hybridtune train`: the correction models fitted on the store's measurements and stored in it."""

from __future__ import annotations

import json

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.model_training import MODEL_KINDS, TrainRequest, train_models


def add_arguments(train) -> None:
    train.add_argument("--db", required=True, metavar="FILE", help="the store to learn from")
    train.add_argument("--kind", action="append", choices=MODEL_KINDS,
                       help="model kind (repeatable; default: both)")
    train.add_argument("--max-rows", type=int, default=None, metavar="N",
                       help="rows a model is fitted on at most (stratified subsample; default "
                            "2000)")
    train.add_argument("--machine", metavar="FILE", help="the machine file whose predictions "
                       "to learn from (default: the one the store predicted with last)")
    train.add_argument("--json", action="store_true")


def _model_line(model, record: dict) -> str:
    params = record["params"]
    kernel = (f"; kernel {params['constant']:.3g} * Matern(length {params['length_scale']:.3g}, "
              f"nu {params['hyper']['nu']}) + white {params['noise_level']:.3g}"
              if model.kind == "gp" else f"; residual spread {params['residual_std']:.3g}")
    sampled = (f"a stratified sample of {len(model.row_ids)} of {model.available_rows} "
               "measured variants (by IVP, size regime and threads)"
               if len(model.row_ids) < model.available_rows
               else f"all {len(model.row_ids)} measured variants")
    return (f"{model.kind}: fitted on {sampled} of hardware {model.hardware_id[:12]}, "
            f"{len(model.encoding.names)} features{kernel}; in-sample R^2 "
            f"{model.score['r2_in_sample']:.2f}; {model.seconds:.1f} s; model {record['model_id']}")


def run(args) -> int:
    trained = train_models(TrainRequest(args.db, tuple(args.kind or MODEL_KINDS), args.max_rows,
                                        args.machine))
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "training"}
                          for r in trained.records], indent=1))
        return EXIT_OK
    for model, record in zip(trained.fitted, trained.records):
        print(_model_line(model, record))
    print(f"stored in {args.db} (machine file {trained.machine_sha256[:12]}, feature schema "
          f"{trained.feature_schema})")
    if trained.other_machines:
        print(f"the store also holds predictions of machine file(s) "
              f"{', '.join(trained.other_machines)}: train on one with --machine FILE")
    return EXIT_OK
