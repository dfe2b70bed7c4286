"""Shutdown signals as a flag: the handler records SIGTERM or SIGINT; loops stop at the next check."""

from __future__ import annotations

import signal

SHUTDOWN = (signal.SIGTERM, signal.SIGINT)
_received: list[int] = []


class Terminated(BaseException):
    """SIGTERM (Slurm's time limit, scancel) or SIGINT (Ctrl-C) was received: stop, keep what is
    stored, exit 128 + the signal's number. A BaseException, as KeyboardInterrupt is, so that no
    handler of failures takes it for a task's failure."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.code = 128 + signum


def _record(signum, frame) -> None:
    # only a flag: raising here could land in a finaliser, where Python prints and drops it
    _received.append(signum)


def install() -> None:
    """Record shutdown signals instead of dying or raising where they arrive."""
    for signum in SHUTDOWN:
        signal.signal(signum, _record)


def received() -> Terminated | None:
    """The stop a recorded signal asks for, or None."""
    return Terminated(_received[0]) if _received else None


def check() -> None:
    """Raise Terminated where a shutdown signal was recorded: called between the pipeline's steps."""
    stop = received()
    if stop is not None:
        raise stop
