"""The store file in HDF5 (the only module that imports h5py): checked opening, column reads, writes by copy and rename."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from hybridtune.store.errors import StoreError, StoreFormatError, StoreVersionError
from hybridtune.store.schema import FORMAT, SCHEMA_VERSION, TABLES, schema_description

CHUNK_ROWS = 1024
_STRING = h5py.string_dtype("utf-8")
_DTYPES = {"str": _STRING, "json": _STRING, "int": np.dtype(np.int64),
           "float": np.dtype(np.float64), "bool": np.dtype(bool)}


@dataclass(frozen=True)
class StoreHeader:
    store_id: str
    last_sequence: int
    rows: dict[str, int]


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


def _check_layout(path: Path, handle: h5py.File) -> StoreHeader:
    found = handle.attrs.get("format")
    if found is None:
        raise StoreFormatError(str(path), f"an HDF5 file without the root attribute format = "
                                          f"{FORMAT!r} (its root holds: {_root_names(handle)})")
    if not isinstance(found, str) or found != FORMAT:
        raise StoreFormatError(str(path), f"an HDF5 file of format {found!r}, not {FORMAT!r}")
    version = handle.attrs.get("schema_version")
    if not isinstance(version, (int, np.integer)) or int(version) != SCHEMA_VERSION:
        raise StoreVersionError(str(path), version.item() if isinstance(version, np.generic)
                                else version, SCHEMA_VERSION)
    store_id, last = handle.attrs.get("store_id"), handle.attrs.get("last_sequence")
    if not isinstance(store_id, str) or not isinstance(last, (int, np.integer)):
        raise StoreFormatError(str(path), "a store without a valid store_id and last_sequence")
    tables = handle.get("tables")
    if not isinstance(tables, h5py.Group):
        raise StoreFormatError(str(path), "a store without its /tables group")
    if set(tables.keys()) != set(TABLES):
        raise StoreFormatError(str(path), f"tables {sorted(tables.keys())}, expected "
                                          f"{sorted(TABLES)}")
    rows = {}
    for table in TABLES.values():
        group = tables[table.name]
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


class StoreFile:
    """A store file opened for reading; it stays a consistent snapshot even if a writer replaces the path."""

    def __init__(self, path: Path, handle: h5py.File, header: StoreHeader):
        self.path = path
        self._handle = handle
        self.header = header

    @classmethod
    def open(cls, path: Path) -> StoreFile:
        try:
            handle = h5py.File(path, "r", locking=False)
        except FileNotFoundError:
            raise StoreError(f"{path}: no such store") from None
        except PermissionError as error:
            raise StoreError(f"{path}: cannot read the store ({error})") from None
        except OSError as error:
            raise StoreFormatError(str(path), f"not a readable HDF5 file ({error})") from None
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

    def columns(self, table_name: str) -> dict[str, np.ndarray]:
        """The stored columns of a table: numbers as arrays, str and json as object arrays of str."""
        group = self._handle["tables"][table_name]
        out = {}
        for name, kind in TABLES[table_name].columns:
            try:
                column = group[name]
                out[name] = column.asstr()[:] if kind in ("str", "json") else column[:]
            except (OSError, ValueError, UnicodeDecodeError) as error:
                raise StoreFormatError(str(self.path), f"table {table_name}, column {name} cannot "
                                                       f"be read ({error})") from None
        return out

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
        with h5py.File(scratch, "w", locking=False) as handle:
            handle.attrs["format"] = FORMAT
            handle.attrs["schema_version"] = np.int64(SCHEMA_VERSION)
            handle.attrs["store_id"] = store_id
            handle.attrs["last_sequence"] = np.int64(0)
            handle.attrs["schema"] = json.dumps(schema_description())
            tables = handle.create_group("tables")
            for table in TABLES.values():
                group = tables.create_group(table.name)
                for name, kind in table.columns:
                    column = group.create_dataset(name, shape=(0,), maxshape=(None,),
                                                  chunks=(CHUNK_ROWS,), dtype=_DTYPES[kind])
                    column.attrs["kind"] = kind
        _publish(scratch, path)
    except OSError as error:
        scratch.unlink(missing_ok=True)
        raise StoreError(f"{path}: cannot create the store ({error})") from None


def _array(kind: str, values: Sequence) -> np.ndarray:
    if kind in ("str", "json"):
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array
    return np.asarray(values, dtype=_DTYPES[kind])


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
