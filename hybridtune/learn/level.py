"""The level of a new configuration's correction: the median log factor of the training configurations nearest to it in thread count and size."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAME_SIZE = math.log(2)      # configurations within this of the nearest log n count as near


@dataclass(frozen=True)
class Levels:
    """Per training configuration (threads, n, median log(measured / predicted))."""
    points: tuple

    def at(self, threads: float, n: float) -> float:
        """The median of the nearest configurations' levels: those of the nearest thread count,
        and among them those within SAME_SIZE of the nearest log n."""
        if not self.points:
            return 0.0
        gap = min(abs(math.log(t / threads)) for t, _, _ in self.points)
        near = [(m, v) for t, m, v in self.points if abs(math.log(t / threads)) <= gap + 1e-12]
        distance = [abs(math.log(m / n)) for m, _ in near]
        closest = min(distance)
        return float(np.median([v for (_, v), d in zip(near, distance)
                                if d <= closest + SAME_SIZE]))

    def of(self, feature_rows) -> np.ndarray:
        """The level of each feature row's configuration."""
        cache: dict = {}
        out = np.empty(len(feature_rows))
        for position, features in enumerate(feature_rows):
            key = (float(features.get("threads", 1) or 1), float(features["n"]))
            if key not in cache:
                cache[key] = self.at(*key)
            out[position] = cache[key]
        return out

    def as_list(self) -> list:
        return [list(p) for p in self.points]

    @classmethod
    def from_list(cls, points) -> Levels:
        return cls(tuple((float(t), float(n), float(v)) for t, n, v in points))


def levels_of(y: np.ndarray, keys: np.ndarray, feature_rows) -> Levels:
    """The level of each configuration among the rows: the median of its rows' y."""
    points = []
    for key in sorted(set(keys)):
        mine = np.flatnonzero(keys == key)
        features = feature_rows[mine[0]]
        points.append((float(features.get("threads", 1) or 1), float(features["n"]),
                       float(np.median(y[mine]))))
    return Levels(tuple(points))
