"""The level of a configuration's correction: its own, or carried from nearby configurations.

Its own where it was trained on; else its IVP's level at a nearby configuration, moved as the other
IVPs' levels move; else the median log factor of the training configurations nearest to it in layout
(ranks x threads) and size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAME_SIZE = math.log(2)      # configurations within this of the nearest log n count as near
IVP_NAME = "ivp_name"        # the feature row's method and IVP (learn.table derives it when reading)
GROUP_SEPARATOR = ":"


def group_name(method: str, ivp: str) -> str:
    """The name a configuration's level is kept under: its method and IVP, since two methods
    of one IVP have levels of their own."""
    return f"{method}{GROUP_SEPARATOR}{ivp}" if method else ivp


def _same_group(point: str, name: str) -> bool:
    """Whether a point's group is `name`; a name of an IVP alone (levels fitted before methods
    were told apart, or a question about an IVP) stands for that IVP in every method."""
    if point == name:
        return True
    if GROUP_SEPARATOR in point and GROUP_SEPARATOR in name:
        return False
    return point.rpartition(GROUP_SEPARATOR)[2] == name.rpartition(GROUP_SEPARATOR)[2]


def _layout_gap(ranks: float, threads: float, other_ranks: float, other_threads: float) -> float:
    """How far two layouts (ranks x threads) are apart: log ratios of ranks and of threads."""
    return abs(math.log(other_ranks / ranks)) + abs(math.log(other_threads / threads))


@dataclass(frozen=True)
class Levels:
    """Per training configuration (group, ranks, threads, n, median log(measured / predicted)),
    the group its method and IVP (group_name); points given without a group have none, points
    given without ranks are of one rank."""
    points: tuple

    def __post_init__(self):
        full = [p if len(p) == 5 else (p[0], 1, *p[1:]) if len(p) == 4 else ("", 1, *p)
                for p in self.points]
        object.__setattr__(self, "points", tuple(
            (str(i), float(r), float(t), float(n), float(v)) for i, r, t, n, v in full))

    def at(self, threads: float, n: float, ivp: str = "", ranks: float = 1) -> float:
        """The level of a configuration: the median of its IVP's training configurations of the
        same layout (ranks x threads) within SAME_SIZE of n where there are any; else its IVP's
        nearest training configuration (by layout, then size) moved by how the other IVPs' levels
        change from there to here, where some IVP was trained on both; else the median of the
        nearest configurations of every IVP: those of the nearest layout, and among them those
        within SAME_SIZE of the nearest log n."""
        if not self.points:
            return 0.0
        own = self._near(ranks, threads, n, ivp) if ivp else []
        if own:
            return float(np.median(own))
        moved = self._moved(ranks, threads, n, ivp) if ivp else None
        if moved is not None:
            return moved
        gap = min(_layout_gap(ranks, threads, r, t) for _, r, t, _, _ in self.points)
        near = [(m, v) for _, r, t, m, v in self.points
                if _layout_gap(ranks, threads, r, t) <= gap + 1e-12]
        distance = [abs(math.log(m / n)) for m, _ in near]
        closest = min(distance)
        return float(np.median([v for (_, v), d in zip(near, distance)
                                if d <= closest + SAME_SIZE]))

    def _near(self, ranks: float, threads: float, n: float, ivp: str) -> list:
        """The levels of this IVP's configurations of this layout within SAME_SIZE of n."""
        return [v for i, r, t, m, v in self.points
                if _same_group(i, ivp) and r == ranks and t == threads and abs(math.log(m / n)) <= SAME_SIZE]

    def _moved(self, ranks: float, threads: float, n: float, ivp: str) -> float | None:
        """The median over this IVP's nearest configurations of its level there plus the median
        over the other IVPs of (their level here - their level there); None where no other IVP
        has both."""
        own = [(r, t, m, v) for i, r, t, m, v in self.points if _same_group(i, ivp)]
        if not own:
            return None
        gap = min(_layout_gap(ranks, threads, r, t) for r, t, _, _ in own)
        own = [p for p in own if _layout_gap(ranks, threads, p[0], p[1]) <= gap + 1e-12]
        closest = min(abs(math.log(m / n)) for _, _, m, _ in own)
        others = sorted({i for i, *_ in self.points if not _same_group(i, ivp)})
        moved = []
        for r, t, m, v in own:
            if abs(math.log(m / n)) > closest + SAME_SIZE:
                continue
            changes = [float(np.median(here)) - float(np.median(there)) for here, there in
                       ((self._near(ranks, threads, n, other), self._near(r, t, m, other))
                        for other in others) if here and there]
            if changes:
                moved.append(v + float(np.median(changes)))
        return float(np.median(moved)) if moved else None

    def of(self, feature_rows) -> np.ndarray:
        """The level of each feature row's configuration."""
        return _per_configuration(feature_rows, self.at, float)

    def trained(self, feature_rows) -> np.ndarray:
        """Per feature row whether its IVP was trained on in its layout within SAME_SIZE of its n
        (its level is its own)."""
        return _per_configuration(
            feature_rows, lambda threads, n, ivp, ranks: bool(ivp) and bool(
                self._near(ranks, threads, n, ivp)), bool)

    def as_list(self) -> list:
        return [list(p) for p in self.points]

    @classmethod
    def from_list(cls, points) -> Levels:
        """Levels from as_list."""
        return cls(tuple(tuple(p) for p in points))


def _layout(features: dict) -> tuple[float, float]:
    """A feature row's (ranks, threads); a row without them is of one rank and one thread."""
    return float(features.get("ranks", 1) or 1), float(features.get("threads", 1) or 1)


def _per_configuration(feature_rows, value, dtype) -> np.ndarray:
    """value(threads, n, IVP, ranks) of each feature row's configuration, once per
    configuration."""
    cache: dict = {}
    out = np.empty(len(feature_rows), dtype)
    for position, features in enumerate(feature_rows):
        ranks, threads = _layout(features)
        key = (threads, float(features["n"]), str(features.get(IVP_NAME, "")), ranks)
        if key not in cache:
            cache[key] = value(*key)
        out[position] = cache[key]
    return out


def levels_of(y: np.ndarray, keys: np.ndarray, feature_rows) -> Levels:
    """The level of each configuration among the rows: the median of its rows' y."""
    points = []
    for key in sorted(set(keys)):
        mine = np.flatnonzero(keys == key)
        features = feature_rows[mine[0]]
        points.append((str(features.get(IVP_NAME, "")), *_layout(features),
                       float(features["n"]), float(np.median(y[mine]))))
    return Levels(tuple(points))
