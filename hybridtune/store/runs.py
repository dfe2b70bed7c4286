"""The facts a run record gets without being told: run id, host, start time (UTC) and tool versions."""

from __future__ import annotations

import socket
import uuid
from datetime import datetime, timezone
from importlib import metadata

import hybridtune


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
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "extra": {},
    }
