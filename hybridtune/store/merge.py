"""Combines the stores of several jobs into one new store.

Every run once, identical rows once, per measurement key the best row.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hybridtune.store.store_errors import StoreError
from hybridtune.store.hdf5 import write_new_store_file
from hybridtune.store.journal import journal_path
from hybridtune.store.records import checked_columns
from hybridtune.store.runs import operation_run
from hybridtune.store.schema import SCHEMA_VERSION, TABLES, Table
from hybridtune.store.snapshot import read_snapshot

# A measurement is valid for its code, size, layout, build and hardware; rows of upgraded stores
# have no provenance and are told apart as schema 2 did.
MEASUREMENT_KEY = ("code_sha256", "n", "threads", "ranks", "nodes", "build_id", "hardware_id",
                   "timing")
PROVENANCE = ("code_sha256", "build_id", "hardware_id")
LEGACY_MEASUREMENT_KEY = ("id", "method", "ivp", "n", "threads", "node")


@dataclass(frozen=True)
class TableCounts:
    rows_in: int                # rows of this table in all the inputs together
    rows_out: int               # of them, rows in the merged store
    duplicates: int             # dropped as the same as a kept row (see merge_stores)
    superseded: int             # measurements with status ok dropped for one with a narrower ci_rel


@dataclass(frozen=True)
class MergeSummary:
    sources: tuple[str, ...]
    source_store_ids: tuple[str, ...]
    target: str
    store_id: str               # the merged store's (a new one)
    run_id: str                 # the runs row of the merge itself (not counted in tables)
    tables: dict[str, TableCounts]
    journal_records: int        # records of killed writers' journals in the inputs, merged too


def _comparable(kind: str, value: object) -> Hashable:
    if kind == "float":
        return None if math.isnan(value) else value
    if kind == "json":
        return json.dumps(json.loads(value), sort_keys=True, separators=(",", ":"))
    return value


def _identities(table: Table, columns: Mapping[str, list]) -> list[tuple]:
    """Per row, all its values but run_id (NaN equal to NaN, JSON compared as data)."""
    return list(zip(*([_comparable(kind, value) for value in columns[name]]
                      for name, kind in table.columns if name != "run_id")))


def _first_of(keys: Iterable[Hashable]) -> list[int]:
    seen: set = set()
    kept = []
    for index, key in enumerate(keys):
        if key not in seen:
            seen.add(key)
            kept.append(index)
    return kept


RETIMED = "interleaved"         # a re-timing round's rows: compared only within their run
PRODUCTION = "production"       # a production run's row (store import): each kept, by its row id


def measurement_key(columns: Mapping[str, list], row: int, passes: bool = False) -> tuple:
    """The key under which measurements are the same: MEASUREMENT_KEY, or where the row lacks
    provenance (from an upgraded store) LEGACY_MEASUREMENT_KEY; with passes, the run too. An
    interleaved re-timing keeps its run in the key always, so a round stays whole (its rows
    met one machine load together) and is never spliced with another run's; a production run's
    row is its own key (its row id, made from its content: the same line imported twice is one)."""
    if columns["timing"][row] == PRODUCTION:
        return ("production", columns["row_id"][row])
    retimed = columns["timing"][row] == RETIMED
    run = (columns["run_id"][row],) if passes or retimed else ()
    if all(columns[name][row] != "" for name in PROVENANCE):
        return ("provenance",) + tuple(columns[name][row] for name in MEASUREMENT_KEY) + run
    return ("legacy",) + tuple(columns[name][row] for name in LEGACY_MEASUREMENT_KEY) + run


def _ci_rel(columns: Mapping[str, list], row: int) -> float:
    value = columns["ci_rel"][row]
    return math.inf if math.isnan(value) else value


def _best_measurements(columns: Mapping[str, list], rows: list[int],
                       passes: bool) -> tuple[list[int], int, int]:
    best: dict[tuple, int] = {}
    failed: set = set()
    kept, duplicates, ok_rows = [], 0, 0
    for row in rows:
        key, status = measurement_key(columns, row, passes), columns["status"][row]
        if status == "ok":
            ok_rows += 1
            if key not in best or _ci_rel(columns, row) < _ci_rel(columns, best[key]):
                best[key] = row
        elif (key, status) in failed:
            duplicates += 1
        else:
            failed.add((key, status))
            kept.append(row)
    return sorted(kept + list(best.values())), duplicates, ok_rows - len(best)


def in_time_order(rows: list[int], run_ids: list, started: Mapping[str, str]) -> list[int]:
    """The rows ordered by when their run started (a run not found, or without a start, first),
    in their order within a run: stores merged in any order keep their measurements' history, so
    the rows appended last are the newest."""
    return sorted(rows, key=lambda row: started.get(run_ids[row]) or "")


def kept_rows(table_name: str, columns: Mapping[str, list],
              passes: bool = False) -> tuple[list[int], int, int]:
    """The rows of a table (checked columns of all inputs in order) that a merge keeps, in order,
    the number dropped as duplicates and the number of measurements superseded."""
    table = TABLES[table_name]
    if table_name == "runs":
        keys = columns["run_id"]
    elif table_name == "prediction_sets":
        keys = columns["digest"]
    else:
        keys = _identities(table, columns)
    rows = _first_of(keys)
    duplicates = len(columns[table.names[0]]) - len(rows)
    if table_name != "measurements":
        return rows, duplicates, 0
    rows, more, superseded = _best_measurements(columns, rows, passes)
    return rows, duplicates + more, superseded


def merge_stores(paths: Iterable[str | Path], out: str | Path,
                 run: Mapping | None = None, passes: bool = False) -> MergeSummary:
    """Write the rows of the stores at paths (current schema version) into a new store file out.

    Inputs are read as readers read them (a killed writer's journal folded in) and never modified.
    Rows are taken in the order of paths and, within a store, of appending (measurements then in
    the order their runs started, so the last appended is the newest); what is kept:
    runs: every run_id once (the provenance of every run). prediction_sets: every digest once.
    measurements: of the rows with status ok and the same key (code_sha256, n, threads, build_id,
    hardware_id), the one with the narrowest ci_rel (NaN counts as widest; the first of equals),
    the others superseded (a first timing and an interleaved re-timing are kept apart: `timing` is
    part of the key, and a re-timing's run too: rounds stay whole); of failed rows (status other than ok), one per key and status; a row
    without provenance (from an upgraded store) is keyed by (id, method, ivp, n, threads, node).
    With passes (the stores are passes of a campaign), the run is part of the key: each run's
    timing of the same code is kept, so a variant has one first timing per pass.
    Every table: rows equal in all columns but run_id, once (the first). The merged store has a new
    store_id and one more runs row, for the merge itself: command "store merge", extra
    {"merged_from": [{"path", "store_id"}, ...]}; run gives other columns of it (argv, for one).
    out is written under a temporary name in its folder and appears only complete.

    Refused, with nothing written: no paths; out (or a journal beside it) exists; an input that is
    missing, not a hybridtune store, of another schema version (StoreVersionError, naming the
    upgrade command) or open for writing by a live process (StoreLockedError).
    """
    paths, out = [Path(path) for path in paths], Path(out)
    if not paths:
        raise StoreError(f"{out}: no stores to merge")
    if out.exists() or out.is_symlink() or journal_path(out).exists():
        raise StoreError(f"{out} exists; it was left unchanged (name a new file)")
    snapshots = [read_snapshot(path, SCHEMA_VERSION) for path in paths]
    combined: dict[str, dict[str, list]] = {name: {column: [] for column in table.names}
                                            for name, table in TABLES.items()}
    for snapshot in snapshots:
        for name in TABLES:
            for column, values in checked_columns(name, snapshot.columns[name])[1].items():
                combined[name][column].extend(values)
    merged, counts = {}, {}
    started = dict(zip(combined["runs"]["run_id"], combined["runs"]["started_at"]))
    for name, columns in combined.items():
        rows, duplicates, superseded = kept_rows(name, columns, passes)
        if name == "measurements":
            rows = in_time_order(rows, columns["run_id"], started)
        merged[name] = {column: [values[row] for row in rows] for column, values in columns.items()}
        counts[name] = TableCounts(len(columns[TABLES[name].names[0]]), len(rows), duplicates,
                                   superseded)
    provenance = {"merged_from": [{"path": str(s.path.resolve()), "store_id": s.store_id}
                                  for s in snapshots]}
    argv = ["store", "merge", *map(str, paths), "-o", str(out)] + (["--passes"] if passes else [])
    own = operation_run("store merge", argv,
                        provenance, run)
    merged["runs"] = {column: values + own[column] for column, values in merged["runs"].items()}
    store_id = uuid.uuid4().hex
    write_new_store_file(out, store_id, merged)
    return MergeSummary(tuple(map(str, paths)), tuple(s.store_id for s in snapshots), str(out),
                        store_id, own["run_id"][0], counts,
                        sum(s.journal_records for s in snapshots))
