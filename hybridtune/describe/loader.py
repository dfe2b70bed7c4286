"""The one loader: any description file to its frozen record, by suffix or by its keys."""

from __future__ import annotations

from pathlib import Path

from hybridtune.describe.part_loader import (KINDS, PART_PARSERS, checked_source, detect_kind,
                                             load_named)
from hybridtune.describe.scenario import parse_scenario

__all__ = ["KINDS", "detect_kind", "load", "load_named"]


def load(path: str | Path, kind: str | None = None):
    """Load and validate one description file; kind is detected when not given."""
    source, found = checked_source(path, kind)
    return {**PART_PARSERS, "scenario": parse_scenario}[found](source)
