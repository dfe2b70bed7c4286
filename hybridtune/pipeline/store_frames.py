"""The store read for learning: frames read once, read-only; learning rows of a machine file."""

from __future__ import annotations

from pathlib import Path

from hybridtune.errors import RequestError
from hybridtune.learn.table import MEASUREMENT_COLUMNS, PREDICTION_COLUMNS, joined_rows
from hybridtune.store import Store


def read_frames(path: str, tables: tuple, machine_sha256: str | None = None) -> dict:
    """table -> frame of the store at path, read once and read-only; of the variant predictions
    only what learning reads (their kernel breakdowns are the largest part of a store). With a
    machine file's sha256: only the predictions whose stored feature row names it, and of the
    measurements only what learning reads."""
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
    frames = read_frames(path, ("variant_predictions", "measurements", "models", "runs"))
    return joined_rows(frames["variant_predictions"], frames["measurements"], machine_sha256,
                       runs=frames["runs"]), frames


def machine_rows(path: str, machine_sha256: str):
    """read_rows of one machine file, reading only its predictions and the measurement columns
    learning reads (everything, as read_rows does, where that finds no rows of the machine file,
    so the error names what the store holds)."""
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
