"""Checks records against their table and turns them into columns of plain values (JSON kept as text)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from hybridtune.store.store_errors import StoreSchemaError
from hybridtune.store.schema import TABLES, Table

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


class _Mismatch(Exception):
    def __init__(self, expected: str):
        self.expected = expected


def _as_str(value):
    if type(value) is not str:
        if not isinstance(value, str):
            raise _Mismatch("a str")
        value = str(value)
    if "\x00" in value:
        raise _Mismatch("a str without NUL characters")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Mismatch("a str encodable as UTF-8") from None
    return value


def _as_int(value):
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise _Mismatch("an int")
        value = int(value)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Mismatch("an int that fits in 64 bits")
    return value


def _as_float(value):
    if type(value) is float:
        return value
    if value is None:
        return math.nan
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise _Mismatch("a float (or None)")
    return float(value)


def _as_bool(value):
    if type(value) is bool:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise _Mismatch("a bool")


def _plain(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _as_json_text(value):
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, str):  # already JSON text: kept if it holds a dict or list
        try:
            value = json.loads(value)
        except ValueError:
            raise _Mismatch("a dict or list, or the JSON text of one") from None
    if not isinstance(value, (dict, list, tuple)):
        raise _Mismatch("a dict or list, or the JSON text of one")
    try:
        return json.dumps(value, separators=(",", ":"), default=_plain)
    except (TypeError, ValueError, RecursionError) as error:
        raise _Mismatch(f"a dict or list of JSON values ({error})") from None


CHECKS = {"str": _as_str, "int": _as_int, "float": _as_float, "bool": _as_bool,
          "json": _as_json_text}


def table_named(name: object) -> Table:
    table = TABLES.get(name) if isinstance(name, str) else None
    if table is None:
        raise StoreSchemaError(str(name), None, name, f"one of the tables {', '.join(TABLES)}")
    return table


def _key_error(table: Table, record: Mapping, row: int) -> StoreSchemaError:
    """The error for a record whose columns are not the table's (unknown ones first, then missing)."""
    names = table.names
    for column in record:
        if column not in names:
            return StoreSchemaError(table.name, column, record[column],
                                    f"one of the columns {', '.join(names)}", row)
    missing = [column for column in names if column not in record]
    column = next((c for c in missing if c != "run_id"), missing[0])
    hint = " (the store was opened without a run: pass run_id)" if column == "run_id" else ""
    return StoreSchemaError(table.name, column, None, f"a {table.kind(column)} value: the column "
                            f"is missing{hint}", row)


def to_columns(table_name: str, records: Iterable[Mapping],
               run_id: str | None = None) -> tuple[Table, dict[str, list]]:
    """Validated columns of the records; run_id columns left out are filled with run_id."""
    table = table_named(table_name)
    names = table.names
    fill_run = run_id is not None and "run_id" in names
    full, without_run = frozenset(names), frozenset(names) - {"run_id"}
    checks = [(name, CHECKS[kind], []) for name, kind in table.columns]
    columns = {name: values for name, _, values in checks}
    for row, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise StoreSchemaError(table.name, None, record, "a mapping of column -> value", row)
        keys = record.keys()
        if keys == full:
            source = record
        elif fill_run and keys == without_run:
            source = {**record, "run_id": run_id}
        else:
            raise _key_error(table, record, row)
        for name, check, values in checks:
            value = source[name]
            try:
                values.append(check(value))
            except _Mismatch as mismatch:
                raise StoreSchemaError(table.name, name, value, mismatch.expected, row) from None
    return table, columns


def checked_columns(table_name: str,
                    columns: Mapping[str, Sequence]) -> tuple[Table, dict[str, list]]:
    """Validated plain copies of a table's whole columns (column -> values), as to_columns checks."""
    table = table_named(table_name)
    names = table.names
    unknown = [column for column in columns if column not in names]
    missing = [column for column in names if column not in columns]
    if unknown or missing:
        column = (unknown or missing)[0]
        raise StoreSchemaError(table.name, column, None, f"the columns {', '.join(names)} "
                               f"(unknown: {', '.join(unknown) or 'none'}; missing: "
                               f"{', '.join(missing) or 'none'})")
    lengths = {len(columns[name]) for name in names}
    if len(lengths) > 1:
        raise StoreSchemaError(table.name, None, sorted(lengths), "columns of equal length")
    out = {}
    for name, kind in table.columns:
        check, values = CHECKS[kind], []
        for row, value in enumerate(columns[name]):
            try:
                values.append(check(value))
            except _Mismatch as mismatch:
                raise StoreSchemaError(table.name, name, value, mismatch.expected, row) from None
        out[name] = values
    return table, out
