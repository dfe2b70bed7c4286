"""The HDF5 store every stage reads and appends to: versioned tables, one writer, crash-safe."""

from hybridtune.store.store_errors import (StoreError, StoreFormatError, StoreLockedError, StoreSchemaError,
                                     StoreVersionError)
from hybridtune.store.merge import MergeSummary, TableCounts, merge_stores
from hybridtune.store.runs import run_defaults
from hybridtune.store.schema import FORMAT, KINDS, SCHEMA_VERSION, TABLES, Table
from hybridtune.store.database import Store
from hybridtune.store.upgrade import UpgradeSummary, upgrade_store

__all__ = ["FORMAT", "KINDS", "SCHEMA_VERSION", "TABLES", "MergeSummary", "Store", "StoreError",
           "StoreFormatError", "StoreLockedError", "StoreSchemaError", "StoreVersionError", "Table",
           "TableCounts", "UpgradeSummary", "merge_stores", "run_defaults", "upgrade_store"]
