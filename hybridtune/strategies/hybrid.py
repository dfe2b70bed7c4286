"""hybrid[:E]: measure in order of expected improvement under a belief over the variants' times.

The belief over log times is the trained model's, or the offline model's, conditioned on each
result. The search ends when fewer than E unmeasured variants are expected to be 3% faster than the
best held (and faster than what a layout of fewer threads holds, where one serves the same
requests) and the best expected variant of each skeleton was measured; k variants at once by the
constant liar.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scipy.special import ndtr

from hybridtune.learn.belief import BETTER_BY, Belief
from hybridtune.learn.teaching_pick import teaching_pick
from hybridtune.strategies.protocol import Search

# With a trained model, a configuration's first pick is the variant whose time tells most of its
# likely fastest (learn/teaching_pick.py), not the one of least expected time: the first measured
# variant was within 5% of the best in 58% of the AMD EPYC ground truth's configurations against
# 32% (20% and 27% on the Xeon's), with as many measured (docs/models.md#first-runs-chosen-to-teach)
TEACH_PICKS = 1
NEGLIGIBLE = 1e-3       # the most the stop's chance may be off by leaving unlikely variants out


@dataclass(frozen=True)
class Decision:
    """One stop decision: the chance that some unmeasured variant is BETTER_BY faster than every
    measured one (stopping then loses more than that whichever measured one is chosen; NaN where
    the search is not scored: its 512 joint draws decide nothing), the number
    of unmeasured variants expected BETTER_BY faster than the best held, the best held (a
    position) and how many were measured then (the first `measured` of the search's order)."""
    chance: float
    expected: float
    best: int
    measured: int


def teaching_picks(fitted) -> int:
    """How many of a search's first picks are chosen to teach: TEACH_PICKS with a trained model,
    none without one (on the kernel effects they made hybrid measure more)."""
    return TEACH_PICKS if fitted is not None else 0


def cover(variants: list, predicted_s: list) -> list[int]:
    """The positions of the best predicted variant of each skeleton (an id's part before its
    first '_')."""
    best: dict = {}
    for position, (variant, seconds) in enumerate(zip(variants, predicted_s)):
        skeleton = str(variant).split("_", 1)[0]
        if skeleton not in best or seconds < predicted_s[best[skeleton]]:
            best[skeleton] = position
    return sorted(best.values())


def first_cover(variants: list, belief: Belief, start: int) -> list[int]:
    """What a search measures before it may stop: the best variant of each skeleton by the
    prior's mean of the configuration's rows from start. A model's errors on a new IVP are
    partly a skeleton's: the skeleton it ranks first may be slower than one it ranks low, and
    only a measurement of each shows it."""
    return cover(variants, belief.mean[start:start + len(variants)].tolist())


class HybridSearch(Search):
    """One configuration's search over `size` consecutive rows of a belief from row `start`: the
    belief may be shared with the searches of the same IVP's other configurations."""

    def __init__(self, belief: Belief, size: int, stop: float, limit: int, start: int = 0,
                 covered=(), teach: int = 0, scored: bool = True):
        self.belief = belief
        self.scored = scored                 # decisions carry the chance the judge scores
        self.teach = teach                   # its first picks chosen for what they teach
        self.size = size
        self.stop = stop
        self.limit = limit
        self.start = start
        self.covered = set(covered)          # positions measured (or failed) before any stop
        self.busy: set = set()
        self.own: set = set()                # its own picks: what --max-measurements counts
        self.excluded: set = set()           # failed for good: never asked again
        self.measured = 0
        self.decisions: list[Decision] = []
        self.ended_by = ""
        self.served: tuple | None = None     # (log seconds, layout) another layout holds

    def served_by(self, seconds: float, layout: str) -> None:
        if math.isfinite(seconds) and seconds > 0:
            self.served = (math.log(seconds), layout)

    @property
    def among(self) -> np.ndarray:
        return np.arange(self.start, self.start + self.size)

    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        self.busy.discard(position)
        self.measured += 1
        if seconds is None or not math.isfinite(seconds) or seconds <= 0:
            self.excluded.add(position)
            return
        self.belief.observe(self.start + position, math.log(seconds), ci_rel)
        self.belief.adapt(self.start + position)

    def ask(self, count: int) -> list[int]:
        """Up to count positions: the first by expected improvement, each further one as if the
        ones before it had measured the best held's time (the constant liar)."""
        picks: list[int] = []
        lies: list[int] = []
        try:
            while len(picks) < count:
                pick = self._next(decide=not picks)
                if pick is None:
                    break
                self.busy.add(pick)
                self.own.add(pick)
                picks.append(pick)
                if len(picks) < count:
                    index = self.start + pick
                    held = self.belief.held_best(self.among)
                    mean, _ = self.belief.posterior()
                    self.belief.observe(index, float(mean[held if held is not None else index]))
                    lies.append(index)
        finally:
            for index in lies:
                self.belief.observed.pop(index, None)
        return picks

    def upcoming(self, count: int) -> list[int]:
        """What ask(count) would answer now; every change the asking made is undone."""
        busy, own, decided, ended_by = set(self.busy), set(self.own), len(self.decisions), \
            self.ended_by
        try:
            return self.ask(count)
        finally:
            self.busy, self.own, self.ended_by = busy, own, ended_by
            del self.decisions[decided:]

    def expected_better(self) -> Decision | None:
        """The stop decision as things stand (None before anything was measured ok)."""
        best = self.belief.held_best(self.among)
        if best is None:
            return None
        chances = self.belief.chances(best, self.among)
        if self.served is not None:
            # a variant no faster than the other layout's is no request's choice
            mean, std = self.belief.posterior()
            chances = np.minimum(chances, ndtr((self.served[0] - mean[self.among])
                                               / std[self.among]))
        chances[list(self.busy | self.excluded)] = 0.0
        if not self.scored:      # a live search stops on the expected count alone
            return Decision(math.nan, float(chances.sum()), best - self.start, self.measured)
        measured = np.zeros(self.size, bool)
        measured[[i - self.start for i in self.belief.observed
                  if 0 <= i - self.start < self.size]] = True
        free = ~measured
        free[list(self.busy | self.excluded)] = False
        # the joint draws leave out the least likely free variants while their chances sum to at
        # most NEGLIGIBLE: the chance that any is better moves by no more than that
        free_chances = np.where(free, chances, 0.0)
        by_chance = np.argsort(free_chances, kind="stable")
        left_out = by_chance[np.cumsum(free_chances[by_chance]) <= NEGLIGIBLE]
        free[left_out] = False
        kept = np.flatnonzero(free | measured)
        return Decision(self.belief.chance_any(measured[kept], self.among[kept], free[kept]),
                        float(chances.sum()), best - self.start, self.measured)

    def _end(self, why: str) -> None:
        if not self.busy:
            self.ended_by = why

    def _why_stopped(self, decision: Decision) -> str:
        count = f"{decision.expected:.2g}" if decision.expected >= 1e-4 else "fewer than 0.0001"
        words = f"{count} variants expected {100 * BETTER_BY:g}% faster than the best held"
        mean, _ = self.belief.posterior()
        held_log = float(mean[self.start + decision.best])
        if self.served is not None and self.served[0] < held_log + math.log(1 - BETTER_BY):
            words += (f" and faster than {self.served[1]}'s best held "
                      f"({math.exp(self.served[0]):.4e} s/step)")
        return f"{words} (below {self.stop:g})"

    def _next(self, decide: bool) -> int | None:
        if self.ended_by:
            return None
        measured = {i - self.start for i in self.belief.observed if 0 <= i - self.start < self.size}
        done = measured | self.excluded
        if len(done) + len(self.busy) >= self.size or len(self.own) >= self.limit:
            self._end("the whole pool" if len(done) + len(self.busy) >= self.size
                      else f"--max-measurements {self.limit}")
            return None
        uncovered = sorted(self.covered - done - self.busy)
        decision = self.expected_better() if decide else None
        if decision is not None:
            self.decisions.append(decision)
            if decision.expected < self.stop and not uncovered:
                self._end(self._why_stopped(decision))
                return None
        mean, _ = self.belief.posterior()
        if decision is not None and decision.expected < self.stop:
            return min(uncovered, key=lambda p: mean[self.start + p])   # only the cover is left
        if len(self.own) < self.teach:
            skip = {self.start + i for i in self.busy | self.excluded} | set(self.belief.observed)
            # what it teaches counts for this configuration and those searched after it
            pick = teaching_pick(self.belief, [i for i in self.among if i not in skip],
                                 np.arange(self.start, len(self.belief.mean)))
            if pick is not None:
                return pick - self.start
        held = self.start + decision.best if decision is not None \
            else self.belief.held_best(self.among)
        best_log = None if held is None else float(mean[held])
        pick = self.belief.next_pick(best_log, {self.start + i for i in self.busy | self.excluded},
                                     self.among)
        if pick is None:
            self._end("the whole pool")
            return None
        return pick - self.start

    def most(self) -> int:
        return self.limit
