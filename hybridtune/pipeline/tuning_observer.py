"""What a tuning run tells whoever watches it (progress, printing): one method per event."""

from __future__ import annotations


class TuningObserver:
    """The events of tuning_run.tune(), each a no-op here; override those you want.

    Called in this order, on rank 0 only:
      phase("kerncraft analyses", count)  as the offline stage's analyses start (none: not called);
      analysed(job, results)              as each analysis ends;
      predicted(offline)                  with the rankings of every configuration;
      planned(plan)                       per configuration, with its shortlist and what is stored;
      phase("builds", count), built(count)  as a planned strategy's builds start and end;
      noted(text)                         with what the user must know before measuring starts
                                          (the hybrid strategy's prior);
      phase(label, count), measured(plan, row)  as measurements start and as each ends;
      phase("re-timing close contenders", count), measured(plan, row)  likewise for re-timing.
    """

    def phase(self, label: str, total: int) -> None:
        """A phase of `total` steps starts."""

    def analysed(self, job, results) -> None:
        """A kerncraft analysis ended."""

    def predicted(self, offline) -> None:
        """The offline stage ended: offline holds the rankings."""

    def planned(self, plan) -> None:
        """A configuration's shortlist and tasks are known."""

    def built(self, count: int) -> None:
        """`count` variants were built."""

    def noted(self, text: str) -> None:
        """Something the user must know before measuring starts."""

    def measured(self, plan, row: dict) -> None:
        """A measurement of plan's configuration ended (stored as row)."""
