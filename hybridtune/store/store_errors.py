"""The store's errors: bad records, a locked store, a file not a store, a schema version mismatch."""

from __future__ import annotations

from hybridtune.errors import HybridtuneError


class StoreError(HybridtuneError):
    """A store cannot be opened, read or written as asked."""


class StoreSchemaError(StoreError):
    """A record does not fit its table: unknown table or column, missing column, wrong type."""

    def __init__(self, table: str, column: str | None, value: object, expected: str,
                 row: int | None = None):
        self.table = table
        self.column = column
        self.value = value
        self.expected = expected
        self.row = row
        parts = [f"store table {table!r}"]
        if column is not None:
            parts.append(f"column {column!r}")
        if row is not None:
            parts.append(f"record {row}")
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        parts.append(f"value {shown}")
        super().__init__(": ".join(parts) + f": expected {expected}")


class StoreLockedError(StoreError):
    """Another writer holds the store."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(f"{path} is open for writing by another process "
                         f"(one writer at a time; readers may open it with mode 'r')")


class StoreFormatError(StoreError):
    """The file (or its journal) is not a readable hybridtune store: corrupt, truncated or foreign."""

    def __init__(self, path: str, found: str):
        self.path = path
        self.found = found
        super().__init__(f"{path}: not a hybridtune store: {found}; the file was left unchanged")


class StoreVersionError(StoreError):
    """The file was written with another schema version than this hybridtune reads.

    store names the store file to upgrade when path is its journal.
    """

    def __init__(self, path: str, found: object, expected: int, store: str | None = None):
        self.path = path
        self.found = found
        self.expected = expected
        if type(found) is int and 0 < found < expected:
            advice = (f"convert it into a new file with `hybridtune store upgrade {store or path} "
                      f"-o NEW`")
        else:
            advice = "use the hybridtune that wrote it, or a new store"
        super().__init__(f"{path}: store schema_version {found!r}, this hybridtune reads and writes "
                         f"schema_version {expected}; the file was left unchanged ({advice})")
