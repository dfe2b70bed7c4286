"""The level of a configuration's correction: its own where it was trained on, else the median log factor of the training configurations nearest to it in thread count and size."""

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
        same thread count within SAME_SIZE of n where there are any, else the median of the
        nearest configurations of every IVP: those of the nearest thread count, and among them
        those within SAME_SIZE of the nearest log n."""
        if not self.points:
            return 0.0
        own = [v for i, t, m, v in self.points
               if ivp and i == ivp and t == threads and abs(math.log(m / n)) <= SAME_SIZE]
        if own:
            return float(np.median(own))
        gap = min(abs(math.log(t / threads)) for _, t, _, _ in self.points)
        near = [(m, v) for _, t, m, v in self.points if abs(math.log(t / threads)) <= gap + 1e-12]
        distance = [abs(math.log(m / n)) for m, _ in near]
        closest = min(distance)
        return float(np.median([v for (_, v), d in zip(near, distance)
                                if d <= closest + SAME_SIZE]))

    def of(self, feature_rows) -> np.ndarray:
        """The level of each feature row's configuration."""
        cache: dict = {}
        out = np.empty(len(feature_rows))
        for position, features in enumerate(feature_rows):
            key = (float(features.get("threads", 1) or 1), float(features["n"]),
                   str(features.get(IVP_NAME, "")))
            if key not in cache:
                cache[key] = self.at(*key)
            out[position] = cache[key]
        return out

    def as_list(self) -> list:
        return [list(p) for p in self.points]

    @classmethod
    def from_list(cls, points) -> Levels:
        """Levels from as_list (points stored without an IVP name have none)."""
        full = [p if len(p) == 4 else ["", *p] for p in points]
        return cls(tuple((str(i), float(t), float(n), float(v)) for i, t, n, v in full))


def levels_of(y: np.ndarray, keys: np.ndarray, feature_rows) -> Levels:
    """The level of each configuration among the rows: the median of its rows' y."""
    points = []
    for key in sorted(set(keys)):
        mine = np.flatnonzero(keys == key)
        features = feature_rows[mine[0]]
        points.append((str(features.get(IVP_NAME, "")), float(features.get("threads", 1) or 1),
                       float(features["n"]), float(np.median(y[mine]))))
    return Levels(tuple(points))
