"""The offline model's errors are calibrated from measured pools: the slope its ranking holds with, and the smooth and own parts of what the slope leaves, recovered from pools drawn with known values."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.learn.offline_errors import calibrated, similarity, slope_of
from hybridtune.strategies.leave_one_out import whole_pools

SLOPES = (-0.4, 0.1, 0.6, 1.1)
SHARED, LENGTH, OWN = 0.3, 10.0, 0.05


def _drawn(fixture_rows, seed: int = 0) -> list:
    """The fixture's whole pools with measured times replaced by draws of known errors."""
    generator = np.random.default_rng(seed)
    out = []
    for index, pool in enumerate(whole_pools(fixture_rows)):
        frame = pool.frame
        lp = np.log(frame["predicted_s"].to_numpy(float))
        smooth = generator.multivariate_normal(
            np.zeros(len(frame)), SHARED ** 2 * similarity(frame["variant"].tolist(),
                                                          frame["features"].tolist(), LENGTH))
        log_t = lp.mean() + SLOPES[index % len(SLOPES)] * (lp - lp.mean()) + smooth \
            + generator.normal(0, OWN, len(frame))
        out.append(frame.assign(median_s=np.exp(log_t)))
    return out


def test_slope_of_an_inverted_ranking_is_negative():
    lp = np.log([1.0, 2.0, 3.0, 4.0])
    assert slope_of(lp, -0.5 * lp + 3) == pytest.approx(-0.5)


def test_calibration_recovers_the_errors_pools_were_drawn_with(fixture_rows):
    # one draw (seed 0) of 8 pools of 32 variants: the slope is told well, the split of what it
    # leaves into a smooth and an own part only roughly
    pools = _drawn(fixture_rows)
    assert len(pools) >= 4
    found = calibrated(pools)
    slopes = [SLOPES[i % len(SLOPES)] for i in range(len(pools))]
    assert found.pools == len(pools)
    assert found.slope == pytest.approx(np.mean(slopes), abs=0.2)
    assert found.slope_spread == pytest.approx(np.std(slopes, ddof=1), rel=0.3)
    assert found.own < 2 * OWN
    assert SHARED / 2.5 < found.shared < SHARED * 2.5


def test_calibration_needs_two_pools(fixture_rows):
    with pytest.raises(ValueError, match="needs 2"):
        calibrated(_drawn(fixture_rows)[:1])
