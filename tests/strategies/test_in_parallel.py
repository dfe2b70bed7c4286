"""The pieces of an evaluation come back in the items' order, from forked processes or from this one."""

from __future__ import annotations

import os

from hybridtune.strategies import in_parallel


def _piece(shared: dict, item: int) -> tuple:
    return shared["offset"] + item, os.getpid()


def test_pieces_come_back_in_order_from_forked_processes():
    found = in_parallel.mapped(_piece, {"offset": 10}, list(range(6)), workers=2)
    assert [value for value, _ in found] == list(range(10, 16))
    assert os.getpid() not in {pid for _, pid in found}


def test_one_worker_or_one_item_runs_here():
    for items, workers in ((list(range(3)), 1), ([5], 2)):
        found = in_parallel.mapped(_piece, {"offset": 0}, items, workers=workers)
        assert [value for value, _ in found] == items
        assert {pid for _, pid in found} == {os.getpid()}
