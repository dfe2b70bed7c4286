"""One block of an IVP's components: a run of components sharing code, repeated at strides."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hybridtune.describe.c_arithmetic import Evaluator


@dataclass(frozen=True)
class Block:
    """Components first .. first+size-1, repeated `repeat` times `stride` apart, sharing code; that
    pattern repeated again `outer_repeat` times `outer_stride` apart (the planes of a 3-D grid)."""
    first: object
    size: object
    code: object
    repeat: object = None
    stride: object = None
    line: int | None = None
    outer_repeat: object = None
    outer_stride: object = None
    origin: int | None = None   # the written block this one was split from (ivp_split.py)

    def repeats(self, env: dict) -> tuple[int, int]:
        """(outer, inner) repeat counts, 1 where a level is absent."""
        inner = 1 if self.repeat is None else int(Evaluator(env)(self.repeat))
        outer = 1 if self.outer_repeat is None else int(Evaluator(env)(self.outer_repeat))
        return outer, inner

    def count(self, env: dict) -> int:
        """How often the block recurs (1 without `repeat`)."""
        outer, inner = self.repeats(env)
        return outer * inner if outer > 0 and inner > 0 else 0

    def starts(self, env: dict) -> list[int]:
        first = int(Evaluator(env)(self.first))
        if self.repeat is None:
            return [first]
        outer, inner = self.repeats(env)
        stride = int(Evaluator(env)(self.stride))
        planes = [0] if self.outer_repeat is None else \
            [q * int(Evaluator(env)(self.outer_stride)) for q in range(outer)]
        return [first + plane + r * stride for plane in planes for r in range(inner)]

    def components(self, env: dict) -> int:
        """How many components this block covers at the given environment (without listing them:
        cheap at any n)."""
        size = int(Evaluator(env)(self.size))
        count = self.count(env)
        return size * count if size > 0 and count > 0 else 0

    def ends(self, env: dict) -> np.ndarray:
        """The smallest and the largest component j this block covers (none where it covers
        none), without listing the others: cheap at any n."""
        size = int(Evaluator(env)(self.size))
        outer, inner = self.repeats(env)
        if size <= 0 or self.count(env) <= 0:
            return np.zeros(0, dtype=np.int64)
        first = int(Evaluator(env)(self.first))
        stride = 0 if self.repeat is None else int(Evaluator(env)(self.stride))
        plane = 0 if self.outer_repeat is None else int(Evaluator(env)(self.outer_stride))
        starts = [first + q * plane + r * stride for q in {0, outer - 1} for r in {0, inner - 1}]
        return np.array([min(starts), max(starts) + size - 1], dtype=np.int64)

    def indices(self, env: dict) -> np.ndarray:
        """Every component j this block covers at the given environment."""
        size = int(Evaluator(env)(self.size))
        if size <= 0 or self.count(env) <= 0:
            return np.zeros(0, dtype=np.int64)
        starts = np.array(self.starts(env), dtype=np.int64)
        return (starts[:, None] + np.arange(size, dtype=np.int64)[None, :]).ravel()
