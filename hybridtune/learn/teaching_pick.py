"""A first measurement chosen for what it teaches of a belief's likely fastest variants."""

from __future__ import annotations

import math

import numpy as np

from hybridtune.learn.belief import BETTER_BY, Belief
from hybridtune.learn.timing import TIMING_SPREAD


def contenders(belief: Belief, among) -> np.ndarray:
    """Per candidate among these, the chance (of the belief's joint draws) that it is within
    BETTER_BY of the fastest of its configuration (the covariance parts' blocks; one
    configuration where there are none)."""
    among = np.asarray(among)
    draws = belief.draws(among)
    blocks = _blocks(belief, among)
    out = np.zeros(len(among))
    for block in np.unique(blocks):
        mine = blocks == block
        fastest = draws[mine].min(axis=0)
        out[mine] = np.mean(draws[mine] <= fastest - math.log(1 - BETTER_BY), axis=1)
    return out


def teaching_pick(belief: Belief, free, among) -> int | None:
    """Of the free candidates, the one whose measurement most narrows what is uncertain of the
    contenders among these: the sum over each configuration's candidates, weighted by their
    chance of being within BETTER_BY of its fastest, of the variance their difference from the
    weighted mean of their configuration loses. The difference, not the time: what every
    variant of a configuration shares (its level) tells nothing of which is fastest."""
    free, among = np.asarray(free, int), np.asarray(among, int)
    if not len(free):
        return None
    weights = contenders(belief, among)
    blocks = _blocks(belief, among)
    cross = belief.covariance(free, among)
    contrast = cross.copy()
    for block in np.unique(blocks):
        mine = blocks == block
        share = weights[mine] / max(weights[mine].sum(), 1e-12)
        contrast[:, mine] -= (cross[:, mine] @ share)[:, None]
    _, std = belief.posterior()
    gain = (contrast ** 2 * weights).sum(axis=1) / (std[free] ** 2 + TIMING_SPREAD ** 2)
    return int(free[int(np.argmax(gain))])


def _blocks(belief: Belief, among: np.ndarray) -> np.ndarray:
    return belief.parts[2][among] if belief.parts else np.zeros(len(among), int)
