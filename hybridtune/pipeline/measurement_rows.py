"""Measurement rows as the pipeline reads them: whether one is an ok time, what a search is told."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class MeasuredRow:
    """A row of the store's measurements table, typed where the pipeline reads it; `columns` is
    the row as the store holds it (and as it is written), every column kept."""
    id: str
    status: str
    median_s: float | None       # seconds per step; None or NaN where it was not timed
    ci_rel: float | None
    ci_low_s: float | None = None
    ci_high_s: float | None = None
    columns: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, columns: dict) -> MeasuredRow:
        """The typed reading of a store row (a Measurement's as_row, or a frame's record)."""
        return cls(columns.get("id"), columns.get("status"), columns.get("median_s"),
                   columns.get("ci_rel"), columns.get("ci_low_s"), columns.get("ci_high_s"),
                   columns)

    @property
    def ok(self) -> bool:
        """An ok status with a finite time: a row that can be compared and chosen."""
        return self.status == "ok" and self.median_s is not None and math.isfinite(self.median_s)

    @property
    def told(self) -> tuple:
        """What a search is told of it: seconds per step (None for a failure), ci_rel."""
        return (self.median_s if self.ok else None), self.ci_rel


def row_ok(row: dict) -> bool:
    """Whether a store row is an ok time (MeasuredRow.ok)."""
    return MeasuredRow.of(row).ok
