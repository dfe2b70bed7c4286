"""Independent pieces of an evaluation on one forked process per core, in order.

The processes are forked, so the shared setting is not copied through pickling; each returns its
piece, and the pieces come back in the order of the items, whatever finishes first.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

_SHARED: dict = {}


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def mapped(work, shared, items: list, workers: int | None = None) -> list:
    """[work(shared, item) for item in items], on up to `workers` (default: every core) forked
    processes where there are two or more of each, else here."""
    workers = min(len(items), workers or cores())
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [work(shared, item) for item in items]
    _SHARED["call"] = (work, shared)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_call, items))
    finally:
        _SHARED.clear()


def _call(item):
    work, shared = _SHARED["call"]
    return work(shared, item)
