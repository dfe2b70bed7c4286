"""Description files of any kind checked: each loaded by the kind it declares, or its error kept."""

from __future__ import annotations

from dataclasses import dataclass

from hybridtune.describe.loader import detect_kind, load
from hybridtune.describe.source import read_source
from hybridtune.errors import HybridtuneError


@dataclass(frozen=True)
class CheckedFile:
    """One file: its kind and name where it loads, else the error that refused it."""
    path: str
    kind: str = ""
    name: str = ""
    error: str = ""


def check_file(path: str) -> CheckedFile:
    """Load a description file by its detected kind; a refusal is returned, not raised."""
    try:
        kind = detect_kind(read_source(path))
        record = load(path, kind)
    except HybridtuneError as exc:
        return CheckedFile(path, error=str(exc))
    return CheckedFile(path, kind, getattr(record, "name", ""))
