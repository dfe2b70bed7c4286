"""Progress of long phases: a bar on a terminal, plain lines in a batch log.

A batch log gets at most one line every few seconds.
"""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

PLAIN_INTERVAL_S = 5.0


def stamped(text: str, stream=None) -> None:
    """One line of a batch log, the time of day in front."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=stream or sys.stderr, flush=True)


class Progress:
    """One phase at a time (analyses, builds, measurements) with a total and a running count."""

    def __init__(self, stream=None, interval_s: float = PLAIN_INTERVAL_S):
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty()
        self.interval_s = interval_s
        self._bar = None
        self._label, self._total, self._done, self._last = "", 0, 0, 0.0

    def start(self, label: str, total: int) -> None:
        self.close()
        self._label, self._total, self._done, self._last = label, total, 0, time.monotonic()
        if total <= 0:
            return
        if self.terminal:
            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TimeRemainingColumn(),
                            TextColumn("{task.fields[note]}"),
                            console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(label, total=total, note="")
        else:
            self._line(f"{label}: 0 of {total}")

    def advance(self, note: str = "", count: int = 1) -> None:
        self._done += count
        if self._bar is not None:
            self._bar.update(self._task, advance=count, note=note[:50])
        elif self._total and (time.monotonic() - self._last >= self.interval_s
                              or self._done == self._total):
            self._line(f"{self._label}: {self._done} of {self._total}"
                       + (f"; last {note}" if note else ""))

    def _line(self, text: str) -> None:
        self._last = time.monotonic()
        stamped(text, self.stream)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
