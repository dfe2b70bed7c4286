"""A space-filling sample of a pool, so that a user's store teaches the model more than a shortlist.

Variants whose skeletons and loop orders differ most from everything measured, taken for a stated
share of a search's measurements.
"""

from __future__ import annotations

import math
import re

import numpy as np

from hybridtune.strategies.protocol import Candidates, Search

_ORDER = re.compile(r"^[ijl]+$")


def traits(variant_id: str) -> frozenset:
    """What makes a variant: its skeleton (the id's part before the first '_') and each kernel's
    name with its loop order (a run of i, j and l after the name)."""
    skeleton, _, rest = str(variant_id).partition("_")
    found = {("skeleton", skeleton)}
    name: list[str] = []
    for token in rest.split("_") if rest else []:
        if _ORDER.match(token) and name:
            found.add(("_".join(name), token))
            name = []
        else:
            name.append(token)
    if name:
        found.add(("_".join(name), ""))
    return frozenset(found)


def distances(ids) -> np.ndarray:
    """How many traits two variants do not share, for every pair."""
    each = [traits(i) for i in ids]
    every = sorted(set().union(*each)) if each else []
    column = {trait: k for k, trait in enumerate(every)}
    has = np.zeros((len(each), len(every)))
    for row, found in enumerate(each):
        has[row, [column[t] for t in found]] = 1.0
    return has @ (1 - has).T + (1 - has) @ has.T


def preference(candidates: Candidates) -> np.ndarray:
    """The candidates' positions fastest predicted first (ties by id): how equally far ones are
    taken, the same whatever order a driver holds them in."""
    return np.lexsort((np.asarray(candidates.ids, str), np.asarray(candidates.predicted_s, float)))


def farthest(distance: np.ndarray, taken, count: int, order: np.ndarray) -> list[int]:
    """count positions, one after another the one farthest (greatest distance to its nearest)
    from the taken ones and those picked before it; of equally far ones the first in order."""
    taken = list(taken)
    nearest = distance[:, taken].min(axis=1) if taken else np.full(len(distance), np.inf)
    nearest[taken] = -1.0
    picks: list[int] = []
    for _ in range(min(count, len(distance) - len(taken))):
        pick = int(order[np.argmax(nearest[order])])
        if nearest[pick] < 0:
            break
        picks.append(pick)
        nearest = np.minimum(nearest, distance[:, pick])
        nearest[pick] = -1.0
    return picks


def sample_size(own: int, share: float) -> int:
    """The sample that makes `share` of own + sample measurements."""
    return math.ceil(own * share / (1 - share) - 1e-9) if 0 < share < 1 else 0


def with_sample(candidates: Candidates, order: list[int], share: float) -> list[int]:
    """A planned strategy's order and, after it, its space-filling sample of the candidates."""
    order = list(order)
    return order + farthest(distances(candidates.ids), order, sample_size(len(order), share),
                            preference(candidates))


class Sampled(Search):
    """An adaptive search of which `share` of the measurements are a space-filling sample: a
    sample pick is due whenever fewer than share of all measurements (the next one counted)
    were sample picks, also after the search itself ended. Every result is told to the search
    too, so that a belief learns from the sample."""

    def __init__(self, inner: Search, candidates: Candidates, share: float):
        self.inner = inner
        self.share = share
        self.distance = distances(candidates.ids)
        self.order = preference(candidates)
        self.taken: set = set()          # asked by either
        self.results: dict = {}          # position -> (seconds, ci_rel), told
        self.sampled = 0
        self.stopped = ""

    @property
    def ended_by(self) -> str:
        if self.stopped:
            return self.stopped
        if self.inner.ended_by and not (self._due() and self._free()):
            return self.inner.ended_by + (f", and its {self.sampled}-variant space-filling "
                                          "sample" if self.sampled else "")
        return ""

    @property
    def decisions(self) -> list:
        """The search's own stop decisions, where it makes any (hybrid)."""
        return getattr(self.inner, "decisions", [])

    def _due(self) -> bool:
        return self.sampled + 1 <= self.share * (len(self.taken) + 1) + 1e-9

    def _free(self) -> bool:
        return len(self.taken) < len(self.distance)

    def ask(self, count: int) -> list[int]:
        picks: list[int] = []
        while len(picks) < count and not self.ended_by:
            if self._due():
                pick = farthest(self.distance, self.taken, 1, self.order)
                if not pick:
                    break
                self.sampled += 1
            else:
                pick = self._inner_pick()
                if not pick:
                    if not self.inner.ended_by:
                        break
                    continue
            self.taken.add(pick[0])
            picks.append(pick[0])
        return picks

    def _inner_pick(self) -> list[int]:
        """The search's next pick that was not asked before; one it asks for again is told the
        known result (or waits for it, where still in flight)."""
        for _ in range(len(self.distance) + 1):
            pick = self.inner.ask(1)
            if not pick or pick[0] not in self.taken:
                return pick
            if pick[0] in self.results:
                self.inner.tell(pick[0], *self.results[pick[0]])
        return []

    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        self.results[position] = (seconds, ci_rel)
        self.taken.add(position)             # told before asked: answered by the store
        self.inner.tell(position, seconds, ci_rel)

    def most(self) -> int:
        return min(len(self.distance), sample_size(self.inner.most(), self.share)
                   + self.inner.most())

    def end(self, why: str) -> None:
        self.stopped = why
        self.inner.end(why)

    def served_by(self, seconds: float, layout: str) -> None:
        self.inner.served_by(seconds, layout)
