"""The JSON-lines journal beside a store file: the writer's lock and its records not yet in the file."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hybridtune.store.store_errors import StoreError, StoreFormatError, StoreLockedError, StoreVersionError
from hybridtune.store.schema import SCHEMA_VERSION, TABLES, Table

JOURNAL_FORMAT = "hybridtune-journal"


@dataclass(frozen=True)
class JournalRecord:
    seq: int
    table: str
    columns: dict[str, list]


@dataclass(frozen=True)
class Journal:
    path: Path
    store_id: str | None        # None: created but no header yet (a writer died right after)
    records: tuple[JournalRecord, ...]


JOURNAL_SUFFIX = ".journal"


def journal_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + JOURNAL_SUFFIX)


def _store_path(path: Path) -> Path:
    name = path.name
    return path.with_name(name[:-len(JOURNAL_SUFFIX)]) if name.endswith(JOURNAL_SUFFIX) else path


_TYPES = {"str": (str,), "json": (str,), "int": (int,), "float": (float, int, type(None)),
          "bool": (bool,)}


def _column_fits(kind: str, values: list) -> bool:
    types = _TYPES[kind]
    if kind in ("int", "float"):
        return all(isinstance(v, types) and not isinstance(v, bool) for v in values)
    return all(isinstance(v, types) for v in values)


def _record(path: Path, number: int, entry: object, tables: Mapping[str, Table]) -> JournalRecord:
    where = f"line {number}"
    if not (isinstance(entry, dict) and entry.keys() == {"seq", "table", "columns"}):
        raise StoreFormatError(str(path), f"{where} is not a journal record")
    seq, table_name, columns = entry["seq"], entry["table"], entry["columns"]
    table = tables.get(table_name) if isinstance(table_name, str) else None
    if type(seq) is not int or table is None or not isinstance(columns, dict):
        raise StoreFormatError(str(path), f"{where}: bad seq, table or columns ({seq!r}, "
                                          f"{table_name!r})")
    if columns.keys() != set(table.names):
        raise StoreFormatError(str(path), f"{where}: the columns of table {table.name} differ "
                                          f"from its schema")
    lengths = {len(v) if isinstance(v, list) else -1 for v in columns.values()}
    if len(lengths) != 1 or -1 in lengths:
        raise StoreFormatError(str(path), f"{where}: columns of unequal length")
    for name, kind in table.columns:
        if not _column_fits(kind, columns[name]):
            raise StoreFormatError(str(path), f"{where}: column {name} holds values that are not "
                                              f"{kind}")
    return JournalRecord(seq, table.name, columns)


def _entries(path: Path, lines: list[bytes]) -> list:
    """The JSON value of every line, parsed in one go; line by line only to locate a bad one."""
    try:
        entries = json.loads(b"[" + b",".join(lines) + b"]")
    except ValueError:
        entries = None
    if isinstance(entries, list) and len(entries) == len(lines):
        return entries
    for number, line in enumerate(lines, start=2):
        try:
            json.loads(line)
        except ValueError:
            raise StoreFormatError(str(path), f"line {number} is not JSON") from None
    raise StoreFormatError(str(path), "a line holds more than one JSON value")


def read_journal(path: Path, version: int = SCHEMA_VERSION,
                 tables: Mapping[str, Table] = TABLES) -> Journal | None:
    """The journal at path (None when there is none); a torn last line (the record in flight) is dropped.

    Its header must name schema version `version`, its records fit `tables` (an older version's
    tables when an upgrade reads an old store's journal).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store journal ({error})") from None
    lines = data.split(b"\n")
    lines.pop()  # the piece after the last newline: empty, or a record whose write did not finish
    if not lines:
        return Journal(path, None, ())
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not (isinstance(header, dict) and header.get("format") == JOURNAL_FORMAT
            and isinstance(header.get("store_id"), str)):
        raise StoreFormatError(str(path), "line 1 is not a hybridtune journal header")
    if header.get("schema_version") != version:
        raise StoreVersionError(str(path), header.get("schema_version"), version,
                                store=str(_store_path(path)))
    records = []
    for number, entry in enumerate(_entries(path, lines[1:]), start=2):
        record = _record(path, number, entry, tables)
        if records and record.seq != records[-1].seq + 1:
            raise StoreFormatError(str(path), f"line {number}: sequence number {record.seq} "
                                              f"after {records[-1].seq}")
        records.append(record)
    return Journal(path, header["store_id"], tuple(records))


def unapplied(journal: Journal | None, store_id: str, last_sequence: int,
              store_path: Path) -> list[JournalRecord]:
    """The journal's records that the store file (store_id, ending at last_sequence) does not hold
    yet, checked to continue it exactly."""
    if journal is None or not journal.records:
        return []
    if journal.store_id != store_id:
        raise StoreFormatError(str(journal.path), f"a journal of another store (store_id "
                                                  f"{journal.store_id}; {store_path} is {store_id})")
    records = [record for record in journal.records if record.seq > last_sequence]
    if records and records[0].seq != last_sequence + 1:
        raise StoreFormatError(str(journal.path), f"its records resume at sequence {records[0].seq} "
                                                  f"but {store_path} ends at {last_sequence}")
    return records


def _replacement_path(path: Path) -> Path:
    return path.with_name(path.name + ".new")


def _header(store_id: str) -> bytes:
    return (json.dumps({"format": JOURNAL_FORMAT, "store_id": store_id,
                        "schema_version": SCHEMA_VERSION}) + "\n").encode()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def writer_holds(path: Path) -> bool:
    """Whether a live writer holds the journal at path (a killed writer's lock is gone with it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise StoreError(f"{path}: cannot read the store journal ({error})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _locked_fd(path: Path) -> int | None:
    """An fd of path holding its exclusive lock, or None when another holder has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


class JournalWriter:
    """The writer's end of the journal: holds the lock, appends records, replaces or removes the file.

    Line 1 is a header {"format", "store_id", "schema_version"}; every further line is one record
    {"seq", "table", "columns": {column: [values]}} (a batch of rows), written with one write() and
    flushed to the operating system before append returns. Sequence numbers continue the store
    file's last_sequence, so replaying is idempotent: records the file already holds are skipped. A
    journal file is only appended to, replaced by rename or removed, never rewritten in place, so a
    reader always sees one consistent file. The flock on it is the single-writer lock.
    """

    def __init__(self, path: Path, fd: int, fsync: bool):
        self.path = path
        self._fd = fd
        self._fsync = fsync

    @classmethod
    def acquire(cls, path: Path, store_path: Path, fsync: bool = False) -> JournalWriter:
        """Lock the journal (creating it empty if missing); StoreLockedError when another writer holds it."""
        for _ in range(10):
            try:
                fd = _locked_fd(path)
            except OSError as error:
                raise StoreError(f"{store_path}: cannot create or lock the journal {path} "
                                 f"({error})") from None
            if fd is None:
                raise StoreLockedError(str(store_path))
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                _replacement_path(path).unlink(missing_ok=True)  # a killed start() left it
                return cls(path, fd, fsync)
            os.close(fd)  # the previous holder removed or replaced the file while we waited
        raise StoreLockedError(str(store_path))

    def start(self, store_id: str) -> None:
        """Begin a fresh journal for store_id: in place if this one is empty, else by rename."""
        if os.fstat(self._fd).st_size == 0:
            _write_all(self._fd, _header(store_id))
            self._sync()
            return
        fresh = _replacement_path(self.path)
        fd = _locked_fd(fresh)
        if fd is None:
            raise StoreError(f"{fresh} is locked: another process is misusing the journal")
        try:
            os.ftruncate(fd, 0)
            _write_all(fd, _header(store_id))
            os.fsync(fd)
            os.replace(fresh, self.path)
        except OSError as error:
            os.close(fd)
            raise StoreError(f"{self.path}: cannot start a new journal ({error})") from None
        os.close(self._fd)
        self._fd = fd

    def append(self, record: JournalRecord) -> None:
        line = json.dumps({"seq": record.seq, "table": record.table, "columns": record.columns},
                          separators=(",", ":")) + "\n"
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            _write_all(self._fd, line.encode())
            self._sync()
        except OSError as error:
            try:
                os.ftruncate(self._fd, end)  # a torn line must not stay in front of later records
            except OSError:
                pass
            raise StoreError(f"{self.path}: cannot append to the store journal ({error})") from None

    def _sync(self) -> None:
        if self._fsync:
            os.fsync(self._fd)

    def remove(self) -> None:
        """Delete the journal (its records are in the store file) and release the lock."""
        try:
            self.path.unlink(missing_ok=True)
        finally:
            self.release()

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
