"""The level of a configuration's correction: its own where it was trained on, else its IVP's level at a nearby configuration moved as the other IVPs' levels move, else the median log factor of the training configurations nearest to it in thread count and size."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAME_SIZE = math.log(2)      # configurations within this of the nearest log n count as near
IVP_NAME = "ivp_name"        # the feature row's IVP (learn.table derives it when reading)


@dataclass(frozen=True)
class Levels:
    """Per training configuration (IVP, threads, n, median log(measured / predicted))."""
    points: tuple

    def at(self, threads: float, n: float, ivp: str = "") -> float:
        """The level of a configuration: the median of its IVP's training configurations with the
        same thread count within SAME_SIZE of n where there are any; else its IVP's nearest
        training configuration (by thread count, then size) moved by how the other IVPs' levels
        change from there to here, where some IVP was trained on both; else the median of the
        nearest configurations of every IVP: those of the nearest thread count, and among them
        those within SAME_SIZE of the nearest log n."""
        if not self.points:
            return 0.0
        own = self._near(threads, n, ivp) if ivp else []
        if own:
            return float(np.median(own))
        moved = self._moved(threads, n, ivp) if ivp else None
        if moved is not None:
            return moved
        gap = min(abs(math.log(t / threads)) for _, t, _, _ in self.points)
        near = [(m, v) for _, t, m, v in self.points if abs(math.log(t / threads)) <= gap + 1e-12]
        distance = [abs(math.log(m / n)) for m, _ in near]
        closest = min(distance)
        return float(np.median([v for (_, v), d in zip(near, distance)
                                if d <= closest + SAME_SIZE]))

    def _near(self, threads: float, n: float, ivp: str) -> list:
        """The levels of this IVP's configurations with these threads within SAME_SIZE of n."""
        return [v for i, t, m, v in self.points
                if i == ivp and t == threads and abs(math.log(m / n)) <= SAME_SIZE]

    def _moved(self, threads: float, n: float, ivp: str) -> float | None:
        """The median over this IVP's nearest configurations of its level there plus the median
        over the other IVPs of (their level here - their level there); None where no other IVP
        has both."""
        own = [(t, m, v) for i, t, m, v in self.points if i == ivp]
        if not own:
            return None
        gap = min(abs(math.log(t / threads)) for t, _, _ in own)
        own = [(t, m, v) for t, m, v in own if abs(math.log(t / threads)) <= gap + 1e-12]
        closest = min(abs(math.log(m / n)) for _, m, _ in own)
        others = sorted({i for i, *_ in self.points if i != ivp})
        moved = []
        for t, m, v in own:
            if abs(math.log(m / n)) > closest + SAME_SIZE:
                continue
            changes = [float(np.median(here)) - float(np.median(there)) for here, there in
                       ((self._near(threads, n, other), self._near(t, m, other))
                        for other in others) if here and there]
            if changes:
                moved.append(v + float(np.median(changes)))
        return float(np.median(moved)) if moved else None

    def of(self, feature_rows) -> np.ndarray:
        """The level of each feature row's configuration."""
        return _per_configuration(feature_rows, self.at, float)

    def trained(self, feature_rows) -> np.ndarray:
        """Per feature row whether its IVP was trained on at its thread count within SAME_SIZE
        of its n (its level is its own)."""
        return _per_configuration(
            feature_rows, lambda threads, n, ivp: bool(ivp) and bool(self._near(threads, n, ivp)),
            bool)

    def as_list(self) -> list:
        return [list(p) for p in self.points]

    @classmethod
    def from_list(cls, points) -> Levels:
        """Levels from as_list (points stored without an IVP name have none)."""
        full = [p if len(p) == 4 else ["", *p] for p in points]
        return cls(tuple((str(i), float(t), float(n), float(v)) for i, t, n, v in full))


def _per_configuration(feature_rows, value, dtype) -> np.ndarray:
    """value(threads, n, IVP) of each feature row's configuration, once per configuration."""
    cache: dict = {}
    out = np.empty(len(feature_rows), dtype)
    for position, features in enumerate(feature_rows):
        key = (float(features.get("threads", 1) or 1), float(features["n"]),
               str(features.get(IVP_NAME, "")))
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
        points.append((str(features.get(IVP_NAME, "")), float(features.get("threads", 1) or 1),
                       float(features["n"]), float(np.median(y[mine]))))
    return Levels(tuple(points))
