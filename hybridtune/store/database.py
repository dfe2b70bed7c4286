"""The Store: one writer appending validated records through the journal, readers of DataFrames.

Any number of readers may read at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from hybridtune.store.store_errors import StoreError, StoreFormatError, StoreSchemaError
from hybridtune.store.frames import rows_containing, table_frame
from hybridtune.store.hdf5 import (StoreFile, append_to_store_file, create_store_file,
                                   discard_scratch)
from hybridtune.store.journal import (JournalRecord, JournalWriter, journal_path, read_journal,
                                      unapplied)
from hybridtune.store.records import table_named, to_columns
from hybridtune.store.runs import run_defaults
from hybridtune.store.schema import TABLES

MODES = ("a", "r")


def _by_table(batches: Iterable[tuple[str, dict[str, list]]]) -> dict[str, dict[str, list]]:
    merged: dict[str, dict[str, list]] = {}
    for table, columns in batches:
        into = merged.setdefault(table, {name: [] for name in columns})
        for name, values in columns.items():
            into[name].extend(values)
    return merged


def _read_snapshot(path: Path) -> tuple[StoreFile, list[JournalRecord]]:
    # the journal first: a record gone from it by the time the file is read is in that file
    journal = read_journal(journal_path(path))
    store_file = StoreFile.open(path)
    header = store_file.header
    try:
        return store_file, unapplied(journal, header.store_id, header.last_sequence, path)
    except StoreError:
        store_file.close()
        raise


def _recovered_writer(path: Path, fsync: bool) -> tuple[JournalWriter, StoreFile]:
    """Lock the store, fold a dead writer's journal into the file, start a fresh journal."""
    if path.exists():
        StoreFile.open(path).close()  # refuse a foreign or damaged file before touching anything
    elif not path.parent.is_dir():
        raise StoreError(f"{path}: the folder {path.parent} does not exist")
    writer = JournalWriter.acquire(journal_path(path), path, fsync)
    try:
        discard_scratch(path)
        journal = read_journal(writer.path)
        if not path.exists():
            if journal is not None and journal.records:
                raise StoreFormatError(str(writer.path), f"a journal with {len(journal.records)} "
                                       f"records but no store file {path}; move the journal away")
            create_store_file(path, uuid.uuid4().hex)
        store_file = StoreFile.open(path)
        header = store_file.header
        records = unapplied(journal, header.store_id, header.last_sequence, path)
        if records:
            store_file.close()
            append_to_store_file(path, _by_table((r.table, r.columns) for r in records),
                                 records[-1].seq)
            store_file = StoreFile.open(path)
        writer.start(store_file.header.store_id)
    except BaseException:
        writer.release()
        raise
    return writer, store_file


class Store:
    """An open store; use Store.open and close it (or use it as a context manager).

    A writer (mode "a") locks the journal beside the file, first folds in what a killed writer left
    in it, then appends every record (or batch) as one flushed journal line; close() writes the
    journal into the HDF5 file (copy and rename) and removes the journal. A reader (mode "r") sees
    the file plus the journal's complete records as one snapshot taken on open (refresh() takes a
    new one) and writes nothing.
    """

    def __init__(self, path: Path, mode: str, store_file: StoreFile,
                 journal_records: list[JournalRecord], writer: JournalWriter | None):
        self.path = path
        self.mode = mode
        self.run_id: str | None = None
        self._writer = writer
        self._closed = False
        self._take(store_file, journal_records)

    def _take(self, store_file: StoreFile, journal_records: list[JournalRecord]) -> None:
        self._file = store_file
        self._stored: dict[str, dict] = {}  # columns read from the file, which never changes under it
        self._pending: dict[str, list[dict[str, list]]] = {name: [] for name in TABLES}
        for record in journal_records:
            self._pending[record.table].append(record.columns)
        self._next_seq = (journal_records[-1].seq if journal_records
                          else store_file.header.last_sequence) + 1

    @classmethod
    def open(cls, path: str | Path, mode: str = "a", run: Mapping | None = None, *,
             fsync: bool = False) -> Store:
        """Open a store: "a" to append (creating it if missing), "r" to read.

        run (mode "a"): the runs record of this writer; columns left out get run_defaults() (a fresh
        run_id, host, UTC start time, versions) and run_id columns of later records default to it.
        fsync: also fsync the journal after every record (power-loss safety; flushing to the
        operating system, always done, already survives a killed process).
        """
        path = Path(path)
        if path.is_symlink():  # new versions are renamed over the path: replace the link's target
            path = path.resolve()
        if mode not in MODES:
            raise StoreError(f"{path}: mode {mode!r}, expected one of {', '.join(MODES)}")
        if mode == "r":
            if run is not None:
                raise StoreError(f"{path}: a run record needs mode 'a'")
            if not path.exists():
                raise StoreError(f"{path}: no such store")
            return cls(path, "r", *_read_snapshot(path), None)
        writer, store_file = _recovered_writer(path, fsync)
        store = cls(path, "a", store_file, [], writer)
        if run is not None:
            try:
                store._start_run(run)
            except BaseException:
                store.close()
                raise
        return store

    def _start_run(self, run: Mapping) -> None:
        if not isinstance(run, Mapping):
            raise StoreSchemaError("runs", None, run, "a mapping of runs columns")
        record = {**run_defaults(), **run}
        self.append_many("runs", [record])
        self.run_id = record["run_id"]

    def _require_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")

    def append(self, table: str, **fields) -> None:
        """Append one record; flushed to the journal before this returns."""
        self.append_many(table, [fields])

    def append_many(self, table: str, records: Iterable[Mapping]) -> None:
        """Append a batch of records as one journal record: all of them are kept, or none."""
        self._require_open()
        if self._writer is None:
            raise StoreError(f"{self.path}: opened for reading (mode 'r'); appending needs mode 'a'")
        checked, columns = to_columns(table, records, self.run_id)
        if not columns[checked.names[0]]:
            return
        self._writer.append(JournalRecord(self._next_seq, checked.name, columns))
        self._next_seq += 1
        self._pending[checked.name].append(columns)

    def frame(self, table: str, columns=None, containing: tuple[str, str] | None = None
              ) -> pd.DataFrame:
        """All rows of a table in the order they were appended (a reader: as of open or refresh),
        with all its columns or only those named (a column not read is not decoded either).

        containing (column, text): only the rows whose stored text in that str or json column
        holds text, tested before anything is decoded; a cheap first cut, so a caller that wants
        one value of a json field still tests the decoded rows.
        """
        self._require_open()
        checked = table_named(table)
        tested = [containing[0]] if containing is not None else []
        unknown = [name for name in [*(columns or ()), *tested] if name not in checked.names]
        if unknown:
            raise StoreError(f"table {checked.name} has no column {unknown[0]!r}; its columns are "
                             f"{', '.join(checked.names)}")
        if tested and checked.kind(tested[0]) not in ("str", "json"):
            raise StoreError(f"table {checked.name}, column {tested[0]} holds "
                             f"{checked.kind(tested[0])} values, not text to look in")
        wanted = checked if columns is None else checked.only(columns)
        stored = self._stored.setdefault(checked.name, {})
        missing = [name for name in dict.fromkeys([*wanted.names, *tested]) if name not in stored]
        if missing:
            stored.update(self._file.columns(checked.name, missing))
        parts = [stored, *self._pending[checked.name]]
        keep = (rows_containing([part[tested[0]] for part in parts], containing[1])
                if tested else None)
        return table_frame(wanted, [{name: part[name] for name in wanted.names} for part in parts],
                           str(self.path), keep)

    def rows(self, table: str) -> int:
        self._require_open()
        checked = table_named(table)
        pending = sum(len(columns[checked.names[0]]) for columns in self._pending[checked.name])
        return self._file.header.rows[checked.name] + pending

    def refresh(self) -> None:
        """A reader takes a new snapshot (a writer's view is always current)."""
        self._require_open()
        if self._writer is not None:
            return
        store_file, records = _read_snapshot(self.path)
        self._file.close()
        self._take(store_file, records)

    def close(self) -> None:
        """A writer writes its journal into the store file and removes the journal; closing twice is fine."""
        if self._closed:
            return
        self._closed = True
        self._file.close()
        if self._writer is None:
            return
        batches = [(table, columns) for table, parts in self._pending.items() for columns in parts]
        try:
            if batches:
                append_to_store_file(self.path, _by_table(batches), self._next_seq - 1)
        except BaseException:
            self._writer.release()
            raise
        self._writer.remove()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"mode {self.mode!r}"
        return f"Store({str(self.path)!r}, {state})"
