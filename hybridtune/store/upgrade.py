"""Converts a store of an older schema version into a new file at the current one, step by step."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hybridtune.store.store_errors import StoreError, StoreFormatError, StoreVersionError
from hybridtune.store.hdf5 import write_new_store_file
from hybridtune.store.journal import journal_path
from hybridtune.store.records import checked_columns
from hybridtune.store.runs import operation_run
from hybridtune.store.schema import SCHEMA_VERSION, TABLES
from hybridtune.store.snapshot import read_snapshot

Columns = dict[str, dict[str, list]]     # table -> column -> values


def _renamed(columns: dict[str, list], old: str, new: str) -> dict[str, list]:
    return {new if name == old else name: values for name, values in columns.items()}


def _add_prediction_sets(tables: Columns) -> Columns:
    """1 -> 2: the prediction_sets table, empty."""
    names = ("digest", "scenario", "method", "ivp", "n", "cores", "model", "machine_sha256",
             "variants", "run_id")
    return {**tables, "prediction_sets": {name: [] for name in names}}


MEASUREMENT_PROVENANCE = ("code_sha256", "generator_version", "build_id", "compiler",
                          "compiler_flags", "hardware_id", "timing")


def _threads_and_provenance(tables: Columns) -> Columns:
    """2 -> 3: cores -> threads in the prediction tables; measurements get a fresh row_id each and
    empty provenance (strings "", hardware {}, ci_target and budget_s NaN), which matches no
    resume key, so such a row is measured again rather than reused."""
    out = dict(tables)
    for name in ("kernel_predictions", "variant_predictions", "prediction_sets"):
        out[name] = _renamed(tables[name], "cores", "threads")
    measurements = tables["measurements"]
    rows = len(measurements["id"])
    out["measurements"] = {
        "row_id": [uuid.uuid4().hex for _ in range(rows)], **measurements,
        **{name: [""] * rows for name in MEASUREMENT_PROVENANCE},
        "hardware": ["{}"] * rows, "ci_target": [math.nan] * rows, "budget_s": [math.nan] * rows}
    return out


def _features_and_models(tables: Columns) -> Columns:
    """3 -> 4: variant predictions get empty features (predicting again fills them in) and the
    models table, empty."""
    predictions = tables["variant_predictions"]
    rows = len(predictions["variant"])
    names = ("model_id", "kind", "feature_schema", "machine_sha256", "hardware_id", "params",
             "training", "training_rows", "score", "run_id")
    return {**tables, "variant_predictions": {**predictions, "features": ["{}"] * rows},
            "models": {name: [] for name in names}}


def _ranks(tables: Columns) -> Columns:
    """4 -> 5: the parallel layout gets MPI ranks (and, for measurements, the nodes they spanned);
    every row so far ran on one rank of one node. The communication tables get ranks, message
    bytes (0: a barrier) and an empty provenance."""
    out = dict(tables)
    for name in ("measurements", "variant_predictions", "prediction_sets", "comm_fits",
                 "comm_benchmarks"):
        columns = tables[name]
        rows = len(next(iter(columns.values()))) if columns else 0
        out[name] = {**columns, "ranks": [1] * rows}
        if name.startswith("comm_"):
            out[name]["provenance"] = ["{}"] * rows
        if name == "comm_benchmarks":
            out[name]["bytes"] = [0] * rows
        if name == "measurements":
            out[name]["nodes"] = [1] * rows
    return out


# version k -> the function turning version k's tables into version k + 1's
STEPS: dict[int, Callable[[Columns], Columns]] = {
    1: _add_prediction_sets,
    2: _threads_and_provenance,
    3: _features_and_models,
    4: _ranks,
}


@dataclass(frozen=True)
class UpgradeSummary:
    source: str                 # the old file, left unchanged
    target: str                 # the new file
    from_version: int
    to_version: int
    source_store_id: str
    store_id: str               # the new file's (a new one)
    run_id: str                 # the runs row of the upgrade itself
    rows: dict[str, int]        # table -> rows carried over (not counting the upgrade's runs row)
    journal_records: int        # records of a killed writer's journal in old, carried over too


def upgraded_tables(tables: Columns, version: int, source: Path) -> Columns:
    """The tables (table -> column -> values) of schema version `version`, stepped up to the current
    version by STEPS."""
    for step_from in range(version, SCHEMA_VERSION):
        step = STEPS.get(step_from)
        if step is None:
            raise StoreVersionError(str(source), version, SCHEMA_VERSION)
        try:
            tables = step(tables)
        except KeyError as missing:
            raise StoreFormatError(str(source), f"its tables lack the column or table {missing} "
                                                f"of schema version {step_from}") from None
    return tables


def upgrade_store(old: str | Path, new: str | Path, run: Mapping | None = None) -> UpgradeSummary:
    """Write the store at old, of an older schema version, as a new store file new at the current one.

    Reads old as a reader does (a killed writer's journal folded in; a live writer's store is
    refused) and never modifies it. Each version step of STEPS is applied in turn; the new file gets
    a new store_id and one more runs row, for the upgrade itself: command "store upgrade", extra
    {"upgraded_from": {"path", "store_id", "schema_version"}} naming the old file; run gives other
    columns of that row (argv, for one), as Store.open's run does. new is written under a
    temporary name in its folder and appears only complete.

    Refused, with nothing written: new (or a journal beside it) exists, old is missing, not a
    hybridtune store, already at the current schema version or of a version with no upgrade.
    """
    old, new = Path(old), Path(new)
    if new.exists() or new.is_symlink() or journal_path(new).exists():
        raise StoreError(f"{new} exists; it was left unchanged (name a new file)")
    snapshot = read_snapshot(old)
    if snapshot.version == SCHEMA_VERSION:
        raise StoreError(f"{old}: already at schema version {SCHEMA_VERSION}; nothing to upgrade")
    if snapshot.version > SCHEMA_VERSION:
        raise StoreVersionError(str(old), snapshot.version, SCHEMA_VERSION)
    tables = upgraded_tables(snapshot.columns, snapshot.version, old)
    if set(tables) != set(TABLES):
        raise StoreFormatError(str(old), f"its tables {sorted(tables)} do not step up to "
                                         f"{sorted(TABLES)}")
    rows = {name: len(columns[TABLES[name].names[0]]) for name, columns in tables.items()}
    checked = {name: checked_columns(name, columns)[1] for name, columns in tables.items()}
    provenance = {"upgraded_from": {"path": str(old.resolve()), "store_id": snapshot.store_id,
                                    "schema_version": snapshot.version}}
    own = operation_run("store upgrade", ["store", "upgrade", str(old), "-o", str(new)],
                        provenance, run)
    checked["runs"] = {name: values + own[name] for name, values in checked["runs"].items()}
    store_id = uuid.uuid4().hex
    write_new_store_file(new, store_id, checked)
    return UpgradeSummary(str(old), str(new), snapshot.version, SCHEMA_VERSION, snapshot.store_id,
                          store_id, own["run_id"][0], rows, snapshot.journal_records)
