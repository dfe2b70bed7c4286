"""hybrid[:P]: measure in order of expected improvement under a belief over the variants' log times (the trained model's, or the offline model's), conditioned on each result, until no unmeasured variant beats the best with probability P."""

from __future__ import annotations

import math

import numpy as np

from hybridtune.learn.hybrid import Belief
from hybridtune.strategies.protocol import Search


class HybridSearch(Search):
    """One configuration's search over `size` consecutive rows of a belief from row `start`: the
    belief may be shared with the searches of the same IVP's other configurations."""

    def __init__(self, belief: Belief, size: int, stop: float, limit: int, start: int = 0):
        self.belief = belief
        self.size = size
        self.stop = stop
        self.limit = limit
        self.start = start
        self.best: tuple | None = None       # (seconds, ci_rel) of the best measured
        self.busy: set = set()
        self.excluded: set = set()           # failed for good: never asked again
        self.ended_by = ""

    @property
    def among(self) -> np.ndarray:
        return np.arange(self.start, self.start + self.size)

    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        self.busy.discard(position)
        if seconds is None or not math.isfinite(seconds) or seconds <= 0:
            self.excluded.add(position)
            return
        ci = ci_rel if ci_rel is not None and math.isfinite(ci_rel) else 0.0
        self.belief.observe(self.start + position, math.log(seconds), ci)
        if self.best is None or seconds < self.best[0]:
            self.best = (seconds, ci)

    def ask(self, count: int) -> list[int]:
        picks = []
        while len(picks) < count:
            pick = self._next()
            if pick is None:
                break
            self.busy.add(pick)
            picks.append(pick)
        return picks

    def _end(self, why: str) -> None:
        if not self.busy:
            self.ended_by = why

    def _next(self) -> int | None:
        if self.ended_by:
            return None
        tried = sum(1 for i in self.belief.observed if 0 <= i - self.start < self.size) \
            + len(self.excluded)
        if tried + len(self.busy) >= self.limit:
            self._end("the whole pool" if self.limit >= self.size
                      else f"--max-measurements {self.limit}")
            return None
        best_log = None
        if self.best is not None:
            best_log = math.log(self.best[0])
            chances = self.belief.chances(best_log, self.best[1], self.among)
            chances[list(self.busy | self.excluded)] = 0.0
            if chances.max() < self.stop:
                self._end(f"no variant faster with probability {self.stop:g}")
                return None
        pick = self.belief.next_pick(best_log, {self.start + i for i in self.busy | self.excluded},
                                     self.among)
        if pick is None:
            self._end("the whole pool")
            return None
        return pick - self.start

    def most(self) -> int:
        return self.limit
