"""Measurement rows as the pipeline reads them: whether one is an ok time, what a search is told."""

from __future__ import annotations

import math


def row_ok(row: dict) -> bool:
    median = row.get("median_s")
    return row.get("status") == "ok" and median is not None and math.isfinite(median)


def observed(row: dict) -> tuple:
    """What a search is told of a measurement row: seconds per step (None for a failure), ci_rel."""
    return (row["median_s"] if row_ok(row) else None), row.get("ci_rel")
