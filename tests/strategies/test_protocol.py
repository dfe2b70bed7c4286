"""Search is an abstract base class: every strategy implements ask, tell and most."""

from __future__ import annotations

import inspect

import pytest

from hybridtune.strategies import hybrid, protocol, sample, tpe
from hybridtune.strategies.protocol import Planned, Search


def test_search_itself_cannot_be_made():
    with pytest.raises(TypeError):
        Search()


def test_a_search_without_tell_cannot_be_made():
    class Incomplete(Search):
        def ask(self, count):
            return []

        def most(self):
            return 0

    with pytest.raises(TypeError):
        Incomplete()


def test_every_search_of_the_package_implements_the_protocol():
    found = [cls for module in (protocol, hybrid, sample, tpe)
             for _, cls in inspect.getmembers(module, inspect.isclass)
             if issubclass(cls, Search) and cls is not Search]
    assert {cls.__name__ for cls in found} >= {"Planned", "HybridSearch", "Sampled", "TpeSearch"}
    assert all(not inspect.isabstract(cls) for cls in found)


def test_the_docstring_gives_the_call_order():
    doc = Search.__doc__
    assert doc.index("tell(") < doc.index("ask(") < doc.index("end(why)")


def test_planned_asks_its_order_and_ends_by_itself():
    search = Planned([2, 0, 1], "all measured")
    assert search.ask(2) == [2, 0] and search.ended_by == ""
    search.tell(2, 1.0)
    assert search.ask(5) == [1] and search.ended_by == "all measured"
