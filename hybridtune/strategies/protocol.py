"""Every strategy's protocol: asked for the next variants, told each result, saying why it ended."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidates:
    """A configuration's ranked variants in the offline model's order (fastest predicted first,
    ties by id): what a strategy chooses among, live or replayed."""
    ids: tuple
    predicted_s: tuple
    kernels: tuple = ()         # per candidate its kernel variants (TEMPLATE_ORDER), where known

    @classmethod
    def from_ranking(cls, predictions) -> Candidates:
        """The ranked ones of a configuration's variant predictions, in the offline order."""
        ok = sorted(((p.predicted_s, p.id) for p in predictions
                     if p.status == "ok" and math.isfinite(p.predicted_s)))
        return cls(tuple(i for _, i in ok), tuple(s for s, _ in ok))

    @classmethod
    def in_order(cls, predictions, kernels: dict) -> Candidates:
        """These predictions as they stand (a shortlist in its strategy's order); kernels: id ->
        its kernel variants."""
        return cls(tuple(p.id for p in predictions), tuple(p.predicted_s for p in predictions),
                   tuple(tuple(kernels[p.id]) for p in predictions))

    def __len__(self) -> int:
        return len(self.ids)


class Search(ABC):
    """One configuration's search over the positions of its Candidates.

    The driver calls, in this order and per configuration:

    1. `tell(position, seconds, ci_rel)` for each result known before the search starts (rows
       the store already answers); seconds per step, or None for a failure;
    2. while `ended_by` is "": `ask(count)` for up to `count` positions to measure now (an empty
       list: nothing to measure at present), then `tell` once per position asked, in any order,
       as each result arrives (a result the store answers is told at once);
    3. `end(why)` where the driver stops the search from outside (a time limit, an interrupted
       measurement), after asking `remaining()` what it would still have asked for.

    Before each ask the driver may tell `served_by(seconds, layout)`: the best another layout
    serving the same requests holds so far.

    A search ends itself by setting `ended_by` to why (its stop rule met, nothing left); the
    driver never asks an ended search again. `most()` bounds the measurements it may ask for (a
    dry run's count), `planned()` gives its whole order where that is known beforehand and
    `upcoming(count)` its likely next asks at any time."""

    ended_by: str = ""

    @abstractmethod
    def ask(self, count: int) -> list[int]:
        """Up to `count` positions to measure next."""

    @abstractmethod
    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        """The result of one position: seconds per step (None: a failure) and its ci_rel."""

    @abstractmethod
    def most(self) -> int:
        """The measurements it may ask for at most (a dry run's bound)."""

    def planned(self) -> list[int] | None:
        """Its whole order where that is known before anything is measured, else None."""
        return None

    def remaining(self) -> list[int]:
        """What it would still ask for, where that is known without measuring (else [])."""
        return []

    def upcoming(self, count: int) -> list[int]:
        """Up to `count` positions it would likely ask for next, its state unchanged (variants
        worth building ahead); [] where it cannot tell."""
        return []

    def end(self, why: str) -> None:
        """End the search from outside (a time limit, an interrupted measurement)."""
        self.ended_by = why

    def served_by(self, seconds: float, layout: str) -> None:
        """Another layout that serves this configuration's requests (as many ranks, fewer
        threads: a tuned library runs a request on up to its threads) holds a variant of
        `seconds` per step: none slower than that is a request's choice. An adaptive search may
        stop sooner; a planned one changes nothing."""
        return None


class Planned(Search):
    """A search whose order is fixed beforehand: it asks for the next of its list until none is
    left; results change nothing."""

    def __init__(self, order, why_ended: str):
        self.order = list(order)
        self.why_ended = why_ended
        self.asked = 0
        self.ended_by = "" if self.order else why_ended

    def ask(self, count: int) -> list[int]:
        picked = self.order[self.asked:self.asked + max(0, count)]
        self.asked += len(picked)
        if self.asked >= len(self.order):
            self.ended_by = self.why_ended
        return picked

    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        return None

    def most(self) -> int:
        return len(self.order)

    def planned(self) -> list[int]:
        return list(self.order)

    def remaining(self) -> list[int]:
        return self.order[self.asked:]
