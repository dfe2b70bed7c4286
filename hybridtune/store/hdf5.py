"""The store file in HDF5, the only module that imports h5py.

Checked opening (old schema versions too), column reads, writes by copy and rename.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from hybridtune.store.store_errors import StoreError, StoreFormatError, StoreVersionError
from hybridtune.store.schema import FORMAT, KINDS, SCHEMA_VERSION, TABLES, Table, schema_description

CHUNK_ROWS = 1024
_STRING = h5py.string_dtype("utf-8")
_DTYPES = {"str": _STRING, "json": _STRING, "int": np.dtype(np.int64),
           "float": np.dtype(np.float64), "bool": np.dtype(bool)}


@dataclass(frozen=True)
class StoreHeader:
    store_id: str
    last_sequence: int
    rows: dict[str, int]


@dataclass(frozen=True)
class StoreContents:
    """Every row of a store file of any schema version, as its own schema declares the tables."""
    version: int
    header: StoreHeader
    tables: dict[str, Table]
    columns: dict[str, dict[str, np.ndarray]]


def _scratch_path(path: Path) -> Path:
    return path.with_name(path.name + ".compacting")


def discard_scratch(path: Path) -> None:
    """Remove what a killed writer left of an unfinished new version (only the lock holder calls this)."""
    _scratch_path(path).unlink(missing_ok=True)


def _dtype_fits(kind: str, dtype: np.dtype) -> bool:
    if kind in ("str", "json"):
        info = h5py.check_string_dtype(dtype)
        return info is not None and info.length is None
    return dtype == _DTYPES[kind]


def _kind_attribute_is(column: h5py.Dataset, kind: str) -> bool:
    found = column.attrs.get("kind")
    return isinstance(found, str) and found == kind


def _root_names(handle: h5py.File) -> str:
    names = sorted(handle.attrs.keys()) + [f"/{name}" for name in sorted(handle.keys())]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "") if names else "nothing"


def _check_format(path: Path, handle: h5py.File) -> object:
    """The schema_version of a hybridtune store file, as found (any value)."""
    found = handle.attrs.get("format")
    if found is None:
        raise StoreFormatError(str(path), f"an HDF5 file without the root attribute format = "
                                          f"{FORMAT!r} (its root holds: {_root_names(handle)})")
    if not isinstance(found, str) or found != FORMAT:
        raise StoreFormatError(str(path), f"an HDF5 file of format {found!r}, not {FORMAT!r}")
    version = handle.attrs.get("schema_version")
    return version.item() if isinstance(version, np.generic) else version


def _declared_tables(path: Path, handle: h5py.File) -> dict[str, Table]:
    """The tables as the file's schema attribute declares them (an older version's schema)."""
    text = handle.attrs.get("schema")
    try:
        declared = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        declared = None
    if not (isinstance(declared, dict) and all(
            isinstance(columns, dict) and columns
            and all(isinstance(kind, str) and kind in KINDS for kind in columns.values())
            for columns in declared.values())):
        raise StoreFormatError(str(path), "a store without a valid schema attribute")
    return {name: Table(name, tuple(columns.items())) for name, columns in declared.items()}


def _check_layout(path: Path, handle: h5py.File,
                  tables: Mapping[str, Table] | None = None) -> StoreHeader:
    """The header of a store whose layout fits tables; None: the current version and its tables."""
    version = _check_format(path, handle)
    if tables is None:
        if type(version) is not int or version != SCHEMA_VERSION:
            raise StoreVersionError(str(path), version, SCHEMA_VERSION)
        tables = TABLES
    store_id, last = handle.attrs.get("store_id"), handle.attrs.get("last_sequence")
    if not isinstance(store_id, str) or not isinstance(last, (int, np.integer)):
        raise StoreFormatError(str(path), "a store without a valid store_id and last_sequence")
    group_of_tables = handle.get("tables")
    if not isinstance(group_of_tables, h5py.Group):
        raise StoreFormatError(str(path), "a store without its /tables group")
    if set(group_of_tables.keys()) != set(tables):
        raise StoreFormatError(str(path), f"tables {sorted(group_of_tables.keys())}, expected "
                                          f"{sorted(tables)}")
    rows = {}
    for table in tables.values():
        group = group_of_tables[table.name]
        if not isinstance(group, h5py.Group):
            raise StoreFormatError(str(path), f"/tables/{table.name} is not a group")
        if set(group.keys()) != set(table.names):
            raise StoreFormatError(str(path), f"table {table.name} has columns {sorted(group.keys())}"
                                              f", expected {sorted(table.names)}")
        lengths = set()
        for name, kind in table.columns:
            column = group[name]
            if (not isinstance(column, h5py.Dataset) or column.ndim != 1
                    or not _kind_attribute_is(column, kind) or not _dtype_fits(kind, column.dtype)):
                raise StoreFormatError(str(path), f"table {table.name}, column {name} is not a "
                                                  f"1-D {kind} column")
            lengths.add(column.shape[0])
        if len(lengths) != 1:
            raise StoreFormatError(str(path), f"table {table.name} has columns of unequal length")
        rows[table.name] = lengths.pop()
    return StoreHeader(store_id, int(last), rows)


def _open_handle(path: Path) -> h5py.File:
    try:
        return h5py.File(path, "r", locking=False)
    except FileNotFoundError:
        raise StoreError(f"{path}: no such store") from None
    except PermissionError as error:
        raise StoreError(f"{path}: cannot read the store ({error})") from None
    except OSError as error:
        raise StoreFormatError(str(path), f"not a readable HDF5 file ({error})") from None


def _read_columns(path: Path, handle: h5py.File, table: Table) -> dict[str, np.ndarray]:
    group = handle["tables"][table.name]
    out = {}
    for name, kind in table.columns:
        try:
            column = group[name]
            out[name] = column.asstr()[:] if kind in ("str", "json") else column[:]
        except (OSError, ValueError, UnicodeDecodeError) as error:
            raise StoreFormatError(str(path), f"table {table.name}, column {name} cannot "
                                              f"be read ({error})") from None
    return out


def _version_and_tables(path: Path, handle: h5py.File) -> tuple[int, dict[str, Table]]:
    version = _check_format(path, handle)
    if type(version) is not int or version < 1:
        raise StoreVersionError(str(path), version, SCHEMA_VERSION)
    return version, dict(TABLES) if version == SCHEMA_VERSION else _declared_tables(path, handle)


def _reading(path: Path, read):
    """read(handle) on the file at path opened for reading; a damaged file is a StoreFormatError."""
    handle = _open_handle(path)
    try:
        return read(handle)
    except (StoreFormatError, StoreVersionError):
        raise
    except Exception as error:  # a damaged file can fail anywhere inside h5py
        raise StoreFormatError(str(path), f"a damaged HDF5 file ({type(error).__name__}: "
                                          f"{error})") from None
    finally:
        handle.close()


def read_store_schema(path: Path) -> tuple[int, dict[str, Table]]:
    """The schema version of the store file at path and its tables (an old version's as declared)."""
    return _reading(path, lambda handle: _version_and_tables(path, handle))


def read_store_contents(path: Path) -> StoreContents:
    """Every row of the store file at path, of whatever schema version it has (never modified).

    A file of the current version is checked against this hybridtune's tables, an older one against
    the schema it declares in its schema attribute; the version must be an int >= 1.
    """
    def read(handle: h5py.File) -> StoreContents:
        version, tables = _version_and_tables(path, handle)
        header = _check_layout(path, handle, tables)
        columns = {name: _read_columns(path, handle, table) for name, table in tables.items()}
        return StoreContents(version, header, tables, columns)
    return _reading(path, read)


class StoreFile:
    """A store file opened for reading; it stays a consistent snapshot even if a writer replaces the path."""

    def __init__(self, path: Path, handle: h5py.File, header: StoreHeader):
        self.path = path
        self._handle = handle
        self.header = header

    @classmethod
    def open(cls, path: Path) -> StoreFile:
        handle = _open_handle(path)
        try:
            header = _check_layout(path, handle)
        except (StoreFormatError, StoreVersionError):
            handle.close()
            raise
        except Exception as error:  # a damaged file can fail anywhere inside h5py
            handle.close()
            raise StoreFormatError(str(path), f"a damaged HDF5 file ({type(error).__name__}: "
                                              f"{error})") from None
        return cls(path, handle, header)

    def columns(self, table_name: str, names=None) -> dict[str, np.ndarray]:
        """The stored columns of a table (all, or those named): numbers as arrays, str and json
        as object arrays of str."""
        table = TABLES[table_name]
        return _read_columns(self.path, self._handle, table if names is None else table.only(names))

    def close(self) -> None:
        self._handle.close()


def _fsync_path(path: Path, directory: bool = False) -> None:
    fd = os.open(path, (os.O_RDONLY | os.O_DIRECTORY) if directory else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(scratch: Path, path: Path) -> None:
    _fsync_path(scratch)
    os.replace(scratch, path)
    _fsync_path(path.parent, directory=True)


def _array(kind: str, values: Sequence) -> np.ndarray:
    if kind in ("str", "json"):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array
    return np.asarray(values, dtype=_DTYPES[kind])


def _write_store(target: Path, store_id: str,
                 columns: Mapping[str, Mapping[str, Sequence]] | None = None) -> None:
    """Write a store of the current schema at target, with the rows of columns (table -> column ->
    values, all tables) or none."""
    with h5py.File(target, "w", locking=False) as handle:
        handle.attrs["format"] = FORMAT
        handle.attrs["schema_version"] = np.int64(SCHEMA_VERSION)
        handle.attrs["store_id"] = store_id
        handle.attrs["last_sequence"] = np.int64(0)
        handle.attrs["schema"] = json.dumps(schema_description())
        tables = handle.create_group("tables")
        for table in TABLES.values():
            group = tables.create_group(table.name)
            for name, kind in table.columns:
                values = columns[table.name][name] if columns is not None else ()
                column = group.create_dataset(name, shape=(len(values),), maxshape=(None,),
                                              chunks=(CHUNK_ROWS,), dtype=_DTYPES[kind])
                if len(values):
                    column[:] = _array(kind, values)
                column.attrs["kind"] = kind


def create_store_file(path: Path, store_id: str) -> None:
    """Write an empty store (every table, no rows) at path, by way of a scratch file and rename.

    Root attributes: format, schema_version, store_id, last_sequence (the last journal record the
    file holds) and schema (JSON). One group /tables/<table> per table holds one 1-D chunked,
    resizable dataset per column: str and json as UTF-8 variable-length strings, int as int64, float
    as float64 (NaN for None), bool as HDF5's boolean enum; attrs["kind"] names the column's kind.
    Only numbers and strings, nothing that reading could execute. The live file is never written
    in place: a new version is written beside it and renamed over it.
    """
    scratch = _scratch_path(path)
    try:
        _write_store(scratch, store_id)
        _publish(scratch, path)
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise StoreError(f"{path}: cannot create the store ({error})") from None


def _link_new(scratch: Path, path: Path) -> None:
    """Give scratch the name path unless path exists (FileExistsError), in one step where the file
    system has hard links."""
    try:
        os.link(scratch, path)
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        if path.exists():
            raise FileExistsError(str(path)) from None
        os.rename(scratch, path)


def write_new_store_file(path: Path, store_id: str,
                         columns: Mapping[str, Mapping[str, Sequence]]) -> None:
    """Write a new store at path holding columns (table -> column -> checked values, every table).

    The file is written under a temporary name in path's folder and linked to path only when
    complete, never over an existing file: interrupted, path does not exist; path created by someone
    else meanwhile, StoreError and path is left alone.
    """
    if not path.parent.is_dir():
        raise StoreError(f"{path}: the folder {path.parent} does not exist")
    scratch = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        os.close(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))
        _write_store(scratch, store_id, columns)
        _fsync_path(scratch)
        _link_new(scratch, path)
        _fsync_path(path.parent, directory=True)
    except FileExistsError:
        raise StoreError(f"{path} exists; it was left unchanged") from None
    except (OSError, ValueError, TypeError, OverflowError) as error:
        raise StoreError(f"{path}: cannot write the store ({error}); nothing was written") from None
    finally:
        scratch.unlink(missing_ok=True)


def append_to_store_file(path: Path, appends: Mapping[str, Mapping[str, Sequence]],
                         last_sequence: int) -> None:
    """Write path anew with the rows of appends (table -> column -> values) added and last_sequence set.

    The copy is written beside the file and renamed over it: killed at any point, path holds either
    the old version or the new one, never a mixture.
    """
    scratch = _scratch_path(path)
    try:
        scratch.unlink(missing_ok=True)
        shutil.copyfile(path, scratch)
        shutil.copymode(path, scratch)
        with h5py.File(scratch, "r+", locking=False) as handle:
            for table_name, columns in appends.items():
                group = handle["tables"][table_name]
                for name, kind in TABLES[table_name].columns:
                    values = columns[name]
                    column = group[name]
                    start = column.shape[0]
                    column.resize((start + len(values),))
                    column[start:] = _array(kind, values)
            handle.attrs["last_sequence"] = np.int64(last_sequence)
        _publish(scratch, path)
    except (OSError, ValueError, TypeError, OverflowError) as error:  # a full disk, a tampered journal
        scratch.unlink(missing_ok=True)
        raise StoreError(f"{path}: cannot write the journal into the store file ({error}); the "
                         f"records stay in the journal") from None
