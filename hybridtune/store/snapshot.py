"""A whole store of any schema version as plain columns, a killed writer's journal folded in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hybridtune.store.store_errors import StoreError, StoreLockedError, StoreVersionError
from hybridtune.store.hdf5 import read_store_contents, read_store_schema
from hybridtune.store.journal import journal_path, read_journal, unapplied, writer_holds
from hybridtune.store.schema import Table


@dataclass(frozen=True)
class Snapshot:
    path: Path
    version: int
    store_id: str
    tables: dict[str, Table]                 # as that version declares them
    columns: dict[str, dict[str, list]]      # table -> column -> values: the file's, the journal's
    journal_records: int                     # records of a killed writer's journal folded in


def read_snapshot(path: Path, version: int | None = None) -> Snapshot:
    """Every row of the store at path as a reader sees it, never modifying the file or its journal.

    Refused: a missing file, a file that is not a store, a store a live writer holds (it is being
    written: StoreLockedError), and with version given, a store of another schema version
    (StoreVersionError, before its rows are read).
    """
    if not path.is_file():
        raise StoreError(f"{path}: no such store")
    journal_file = journal_path(path)
    if writer_holds(journal_file):
        raise StoreLockedError(str(path))
    found, tables = read_store_schema(path)
    if version is not None and found != version:
        raise StoreVersionError(str(path), found, version)
    # the journal first: a record gone from it by the time the file is read is in that file
    journal = read_journal(journal_file, found, tables)
    contents = read_store_contents(path)
    if contents.version != found:
        raise StoreError(f"{path}: the store was replaced while being read; try again")
    header = contents.header
    records = unapplied(journal, header.store_id, header.last_sequence, path)
    columns = {name: {column: values.tolist() for column, values in stored.items()}
               for name, stored in contents.columns.items()}
    for record in records:
        for column, values in record.columns.items():
            columns[record.table][column].extend(values)
    return Snapshot(path, found, header.store_id, contents.tables, columns, len(records))
