"""A table's stored columns and journal columns as one DataFrame (JSON text decoded).

JSON text is decoded to dicts and lists.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from hybridtune.store.store_errors import StoreFormatError
from hybridtune.store.schema import Table

_NUMERIC = {"int": np.int64, "float": np.float64, "bool": bool}


def _as_array(kind: str, piece: Sequence) -> np.ndarray:
    if kind in _NUMERIC:
        return np.asarray(piece, dtype=_NUMERIC[kind])  # None in a float column becomes NaN
    array = np.empty(len(piece), dtype=object)
    array[:] = piece
    return array


def _joined(kind: str, pieces: list[Sequence]) -> np.ndarray:
    """One array of the pieces in order; consecutive lists (journal batches) are converted at once."""
    arrays, values = [], []
    for piece in pieces:
        if isinstance(piece, np.ndarray):
            if values:
                arrays.append(_as_array(kind, values))
                values = []
            arrays.append(_as_array(kind, piece))
        else:
            values.extend(piece)
    if values or not arrays:
        arrays.append(_as_array(kind, values))
    return np.concatenate(arrays) if len(arrays) > 1 else arrays[0]


def _decoded(texts: np.ndarray, table: Table, column: str, source: str) -> np.ndarray:
    try:
        values = json.loads("[" + ",".join(texts) + "]")  # one parse for the column, not one a row
    except ValueError:
        values = None
    if not isinstance(values, list) or len(values) != len(texts):
        raise StoreFormatError(source, f"table {table.name}, column {column} holds text that is "
                                       f"not one JSON value a row")
    decoded = np.empty(len(values), dtype=object)
    for row, value in enumerate(values):
        decoded[row] = value
    return decoded


def rows_containing(pieces: list[Sequence], text: str) -> np.ndarray:
    """Per row of a str or json column's pieces (in order): whether its stored text holds text."""
    values = _joined("str", pieces)
    return np.fromiter((text in value for value in values), dtype=bool, count=len(values))


def table_frame(table: Table, parts: Sequence[Mapping[str, Sequence]],
                source: str, keep: np.ndarray | None = None) -> pd.DataFrame:
    """The rows of all parts in order (only those keep marks, where given, and only they are
    decoded), one column per schema column with the kind's dtype.

    source names the store in the error raised for a json column that does not decode.
    """
    data = {}
    for name, kind in table.columns:
        values = _joined(kind, [part[name] for part in parts])
        if keep is not None:
            values = values[keep]
        if kind == "json":
            data[name] = pd.Series(_decoded(values, table, name, source), dtype=object)
        elif kind == "str":
            data[name] = pd.Series(values, dtype=str)
        else:
            data[name] = pd.Series(values)
    return pd.DataFrame(data, columns=list(table.names))
