"""Which sizes n an IVP takes: a minimum, a maximum, a divisor, and n as a square or cube of a grid."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAMPLE_TARGETS = (100, 1000, 10000)
POWERS = {"square_of": 2, "cube_of": 3}
_POWER_WORDS = {2: "square", 3: "cube"}


def integer_root(n: int, degree: int) -> int:
    """The largest r >= 0 with r^degree <= n (exact for any n >= 0)."""
    if degree == 2:
        return math.isqrt(n)
    root = round(n ** (1.0 / degree))
    while root ** degree > n:
        root -= 1
    while (root + 1) ** degree <= n:
        root += 1
    return root


def root_step(k: int, degree: int = 2) -> int:
    """The smallest r such that k divides r^degree: each prime of k to its power over degree,
    rounded up."""
    step, p = 1, 2
    while p * p <= k:
        power = 0
        while k % p == 0:
            k //= p
            power += 1
        step *= p ** (-(-power // degree))
        p += 1
    return step * k


@dataclass(frozen=True)
class SizeRule:
    """Which n are valid: minimum <= n <= maximum, n a multiple of multiple_of, optionally
    n = fields * root^2 (square_of names the root) or n = fields * root^3 (cube_of)."""
    minimum: int = 1
    multiple_of: int = 1
    square_of: str | None = None
    cube_of: str | None = None
    maximum: int | None = None
    fields: int = 1

    @property
    def root(self) -> tuple[str, int] | None:
        """(the root's name, the power n grows with) for a grid of points, else None."""
        if self.square_of:
            return self.square_of, 2
        if self.cube_of:
            return self.cube_of, 3
        return None

    def root_value(self, n: int) -> int:
        """The root at a valid n: the grid's points per side."""
        return integer_root(int(n) // self.fields, self.root[1])

    def check(self, n: int) -> str | None:
        """None when n is valid, else what was expected."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            return "an integer n"
        if n < self.minimum:
            return f"n >= {self.minimum}"
        if self.maximum is not None and n > self.maximum:
            return f"n <= {self.maximum}"
        if n % self.multiple_of:
            return f"n a multiple of {self.multiple_of}"
        if self.root:
            name, degree = self.root
            if n % self.fields or self.root_value(n) ** degree * self.fields != n:
                times = f"{self.fields} * " if self.fields > 1 else ""
                return f"n a {times}perfect {_POWER_WORDS[degree]} (n = {times}{name}^{degree})"
        return None

    def smallest_at_least(self, n: int) -> int:
        n = max(int(n), self.minimum)
        if not self.root:
            return n + (-n) % self.multiple_of
        degree = self.root[1]
        # n = f r^d is a multiple of k iff k / gcd(k, f) divides r^d
        step = root_step(self.multiple_of // math.gcd(self.multiple_of, self.fields), degree)
        need = -(-n // self.fields)
        root = integer_root(need - 1, degree) + 1 if need > 0 else 0
        root += (-root) % step
        return self.fields * root ** degree

    def next_valid(self, n: int) -> int:
        """The smallest valid size >= n; with a maximum, never more than it: where no valid size
        lies between n and the maximum, the largest valid size (rules whose smallest size exceeds
        the maximum are refused when they are read)."""
        found = self.smallest_at_least(n)
        if self.maximum is None or found <= self.maximum:
            return found
        return self.largest_valid()

    def largest_valid(self) -> int:
        """The largest valid size at most the maximum (only rules with a maximum have one)."""
        if self.maximum is None:
            raise ValueError("a size rule without a maximum has no largest valid size")
        if not self.root:
            return self.maximum - self.maximum % self.multiple_of
        root = integer_root(self.maximum // self.fields, self.root[1])
        while root > 0 and self.check(self.fields * root ** self.root[1]) is not None:
            root -= 1
        return self.fields * root ** self.root[1]

    def samples(self) -> list[int]:
        """A few valid sizes for checking a description: the smallest and some larger."""
        first = self.next_valid(self.minimum)
        values = [first, self.next_valid(first + 1)]
        values.append(self.next_valid(values[-1] + 1))
        values += [self.next_valid(target) for target in SAMPLE_TARGETS if target > values[-1]]
        return sorted(set(values))
