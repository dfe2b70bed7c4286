"""The facts a run record gets without being told, and the run record of a store operation.

The facts: run id, host, UTC start and tool versions.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from importlib import metadata

import hybridtune
from hybridtune.store.store_errors import StoreSchemaError
from hybridtune.store.records import to_columns


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def run_defaults() -> dict:
    """Every runs column with a value describing this process; a caller's own values override them."""
    return {
        "run_id": uuid.uuid4().hex,
        "command": "",
        "argv": [],
        "host": socket.gethostname(),
        "machine_file": "",
        "machine_sha256": "",
        "compiler": "",
        "compiler_flags": "",
        "hybridtune_version": hybridtune.__version__,
        "kerncraft_version": _version("kerncraft"),
        "osaca_version": _version("osaca"),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "extra": {},
    }


def operation_run(command: str, argv: list[str], provenance: Mapping,
                  run: Mapping | None) -> dict[str, list]:
    """The runs row (as checked columns) of a store operation: run_defaults(), then command and
    argv, then the caller's run columns; provenance is added to its extra."""
    given = dict(run or {})
    extra = given.pop("extra", {})
    if not isinstance(extra, Mapping):
        raise StoreSchemaError("runs", "extra", extra, "a dict (the operation adds its own keys)")
    record = {**run_defaults(), "command": command, "argv": argv, **given,
              "extra": {**extra, **provenance}}
    return to_columns("runs", [record])[1]
