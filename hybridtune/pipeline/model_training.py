"""`train`: correction models fitted on a store's learning rows of one machine file, stored in it."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from hybridtune.learn.persist import model_record
from hybridtune.learn.table import machine_files
from hybridtune.learn.train import MAX_ROWS, MIN_ROWS, fit
from hybridtune.pipeline.store_frames import read_rows
from hybridtune.pipeline.store_policy import writable
from hybridtune.store import Store

MODEL_KINDS = ("linear", "gp")


@dataclass(frozen=True)
class TrainRequest:
    """The store to learn from and write to, the model kinds, the rows at most, the machine file."""
    db: str
    kinds: tuple = MODEL_KINDS
    max_rows: int | None = None     # default learn/train's MAX_ROWS
    machine: str | None = None      # machine file path (default: the one predicted with last)


@dataclass(frozen=True)
class Trained:
    """The fitted models and their stored records; the machine files the store also predicted for."""
    fitted: tuple
    records: tuple
    machine_sha256: str
    feature_schema: object
    other_machines: tuple


def train_models(request: TrainRequest) -> Trained:
    """Fit each kind on the store's rows and append the models to it (refused before any fit
    where the store may not be written or max_rows is too small)."""
    writable(request.db)
    max_rows = MAX_ROWS if request.max_rows is None else request.max_rows
    if max_rows < MIN_ROWS:
        raise RequestError(f"--max-rows {max_rows}: expected a count >= {MIN_ROWS} (the fewest "
                           "rows a model is fitted on)")
    machine = load(request.machine, "machine").sha256 if request.machine else None
    rows, frames = read_rows(request.db, machine)
    others = tuple(sha[:12] for sha in machine_files(frames["variant_predictions"])
                   if sha != rows.machine_sha256)
    fitted = tuple(fit(rows, kind, max_rows) for kind in request.kinds)
    records = tuple(model_record(f) for f in fitted)
    run = {"command": "train", "argv": sys.argv[1:], "machine_sha256": rows.machine_sha256}
    with Store.open(request.db, "a", run=run) as store:
        store.append_many("models", list(records))
    return Trained(fitted, records, rows.machine_sha256, rows.feature_schema, others)
