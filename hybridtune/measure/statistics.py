"""Distribution-free confidence intervals of the median from order statistics (binomial ranks)."""

from __future__ import annotations

import math
from functools import lru_cache


def median_ci(samples: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """(median, low, high); low/high are the order statistics covering the median with the given
    confidence, or -inf/inf when there are too few samples for that confidence (fewer than 6 at 95%)."""
    values = sorted(samples)
    count = len(values)
    if count == 0:
        return math.nan, -math.inf, math.inf
    middle = count // 2
    median = values[middle] if count % 2 else 0.5 * (values[middle - 1] + values[middle])
    rank = binomial_quantile((1 - confidence) / 2, count)   # 1-based rank of the lower bound
    if rank < 1:
        return median, -math.inf, math.inf
    return median, values[rank - 1], values[count - rank]


@lru_cache(maxsize=None)
def binomial_quantile(q: float, count: int) -> int:
    """The smallest k with P(X <= k) >= q for X ~ Binomial(count, 1/2) (scipy's binom.ppf, in
    exact integers: importing scipy.stats takes a second, in every process that times)."""
    numerator, denominator = float(q).as_integer_ratio()
    target, below = numerator * 2 ** count, 0
    for k in range(count + 1):
        below += math.comb(count, k)
        if below * denominator >= target:
            return k
    return count


def relative_half_width(median: float, low: float, high: float) -> float:
    """Half the interval's width relative to the median (inf when the interval is unbounded)."""
    if not (math.isfinite(low) and math.isfinite(high)) or median <= 0:
        return math.inf
    return 0.5 * (high - low) / median
