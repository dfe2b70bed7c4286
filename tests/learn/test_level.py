"""A new configuration's level is the median of the nearest training configurations' levels, by thread count first and then by size."""

from __future__ import annotations

import numpy as np

from hybridtune.learn.level import Levels, levels_of

POINTS = Levels(((1.0, 600.0, 0.1), (1.0, 1000.0, 0.3), (1.0, 60000.0, -0.5),
                 (2.0, 600.0, 1.2), (2.0, 6000.0, 0.8)))


def test_the_nearest_thread_count_decides_before_the_size():
    assert POINTS.at(2, 600) == 1.2
    assert POINTS.at(3, 600) == 1.2          # 2 threads are nearer to 3 than 1 thread is
    assert POINTS.at(1, 60000) == -0.5


def test_sizes_within_a_factor_two_of_the_nearest_share_their_median():
    assert POINTS.at(1, 700) == np.median([0.1, 0.3])
    assert POINTS.at(1, 20000) == -0.5       # 1000 is far more than a factor two from 60000
    assert POINTS.at(2, 3000) == 0.8


def test_levels_of_feature_rows_and_the_empty_levels():
    rows = [{"threads": 2, "n": 600}, {"n": 60000}, {"threads": 1, "n": 700}]
    np.testing.assert_allclose(POINTS.of(rows), [1.2, -0.5, 0.2])
    assert Levels(()).at(1, 600) == 0.0


def test_levels_of_training_rows_is_each_configurations_median_and_survives_a_round_trip():
    y = np.array([0.0, 1.0, 2.0, 5.0, 7.0])
    keys = np.array(["a", "a", "a", "b", "b"])
    rows = [{"threads": 1, "n": 600}] * 3 + [{"threads": 2, "n": 600}] * 2
    levels = levels_of(y, keys, rows)
    assert levels.points == ((1.0, 600.0, 1.0), (2.0, 600.0, 6.0))
    assert Levels.from_list(levels.as_list()) == levels
