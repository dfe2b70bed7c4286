"""The median's interval: the binomial ranks in exact integers agree with scipy's, and the order statistics they pick."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from hybridtune.measure.statistics import binomial_quantile, median_ci, relative_half_width


COUNTS = [*range(301), 511, 1000, 1023, 1024, 1025, 2000]   # to past max_repetitions, and far


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_the_ranks_are_scipys(confidence):
    q = (1 - confidence) / 2
    theirs = binom.ppf(q, np.array(COUNTS), 0.5).astype(int)
    differ = [(n, r) for n, r in zip(COUNTS, theirs) if binomial_quantile(q, n) != r]
    assert differ == []


def test_the_interval_is_the_order_statistics_at_those_ranks():
    samples = [float(v) for v in (9, 1, 8, 2, 7, 3, 6, 4, 5, 10)]     # 10 samples: ranks 2 and 9
    assert median_ci(samples) == (5.5, 2.0, 9.0)
    assert relative_half_width(*median_ci(samples)) == pytest.approx(3.5 / 5.5)


def test_too_few_samples_leave_the_interval_unbounded():
    median, low, high = median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert median == 3.0 and (low, high) == (-math.inf, math.inf)
    assert median_ci([1.0] * 6)[1:] == (1.0, 1.0)
