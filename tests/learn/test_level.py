"""A configuration's level is its IVP's own where that IVP was trained on at about that size, else the median of the nearest training configurations' levels, by layout (ranks x threads) first and then by size."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.learn.level import IVP_NAME, Levels, levels_of

POINTS = Levels((("Cusp", 1.0, 600.0, 0.1), ("Wave1D", 1.0, 1000.0, 0.3),
                 ("Cusp", 1.0, 60000.0, -0.5), ("Cusp", 2.0, 600.0, 1.2),
                 ("Wave1D", 2.0, 6000.0, 0.8)))


def test_the_nearest_thread_count_decides_before_the_size():
    assert POINTS.at(2, 600) == 1.2
    assert POINTS.at(3, 600) == 1.2          # 2 threads are nearer to 3 than 1 thread is
    assert POINTS.at(1, 60000) == -0.5


def test_sizes_within_a_factor_two_of_the_nearest_share_their_median():
    assert POINTS.at(1, 700) == np.median([0.1, 0.3])
    assert POINTS.at(1, 20000) == -0.5       # 1000 is far more than a factor two from 60000
    assert POINTS.at(2, 3000) == 0.8


def test_an_ivp_trained_on_at_about_this_size_and_thread_count_has_its_own_level():
    assert POINTS.at(1, 700, "Cusp") == 0.1 and POINTS.at(1, 700, "Wave1D") == 0.3
    assert POINTS.at(1, 700, "Heat2D") == np.median([0.1, 0.3])      # never trained on
    assert POINTS.at(2, 600, "Wave1D") == 1.2                         # Wave1D's 2 threads: n 6000
    # Cusp at 600 and 60000 are too far from 6000: the nearest of every IVP, 1000 and both of those
    assert POINTS.at(1, 6000, "Cusp") == 0.1


def test_levels_of_feature_rows_and_the_empty_levels():
    rows = [{"threads": 2, "n": 600}, {"n": 60000}, {"threads": 1, "n": 700},
            {"threads": 1, "n": 700, IVP_NAME: "Wave1D"}]
    np.testing.assert_allclose(POINTS.of(rows), [1.2, -0.5, 0.2, 0.3])
    assert Levels(()).at(1, 600) == 0.0


def test_levels_of_training_rows_is_each_configurations_median_and_survives_a_round_trip():
    y = np.array([0.0, 1.0, 2.0, 5.0, 7.0])
    keys = np.array(["a", "a", "a", "b", "b"])
    rows = [{"threads": 1, "n": 600, IVP_NAME: "Cusp"}] * 3 + [{"threads": 2, "n": 600}] * 2
    levels = levels_of(y, keys, rows)
    assert levels.points == (("Cusp", 1.0, 1.0, 600.0, 1.0), ("", 1.0, 2.0, 600.0, 6.0))
    assert Levels.from_list(levels.as_list()) == levels
    # stored before IVP names, and before ranks: of one rank
    assert Levels.from_list([[1, 600, 0.5]]).points == (("", 1.0, 1.0, 600.0, 0.5),)
    assert Levels.from_list([["Cusp", 2, 600, 0.5]]).points == (("Cusp", 1.0, 2.0, 600.0, 0.5),)


def test_a_layout_of_more_ranks_has_its_own_level_and_ranks_count_in_the_nearest_layout():
    levels = Levels((("Cusp", 1.0, 1.0, 6000.0, 0.1), ("Cusp", 2.0, 1.0, 6000.0, 0.9),
                     ("Wave1D", 1.0, 2.0, 6000.0, -0.2)))
    assert levels.at(1, 6000, "Cusp", ranks=2) == 0.9 and levels.at(1, 6000, "Cusp") == 0.1
    assert levels.at(1, 6000, ranks=2) == 0.9          # 2x1 is itself; 1x2 is a rank away
    rows = [{"ranks": 2, "threads": 1, "n": 6000, IVP_NAME: "Cusp"},
            {"threads": 1, "n": 6000, IVP_NAME: "Cusp"}]
    np.testing.assert_allclose(levels.of(rows), [0.9, 0.1])
    assert levels.trained(rows).tolist() == [True, True]
    y, keys = np.array([1.0, 3.0]), np.array(["a", "b"])
    assert levels_of(y, keys, rows).points == (("Cusp", 2.0, 1.0, 6000.0, 1.0),
                                               ("Cusp", 1.0, 1.0, 6000.0, 3.0))


def test_an_ivp_trained_on_at_another_size_moves_its_level_as_the_other_ivps_move():
    levels = Levels((("Cusp", 1.0, 600.0, 0.5), ("Wave1D", 1.0, 600.0, 0.1),
                     ("Wave1D", 1.0, 6000.0, -0.3), ("Medakzo", 1.0, 600.0, 0.0),
                     ("Medakzo", 1.0, 6000.0, -0.2), ("Heat2D", 1.0, 6000.0, 2.0)))
    # Cusp at 6000: its level at 600 moved by the median change of Wave1D (-0.4) and Medakzo (-0.2)
    assert levels.at(1, 6000, "Cusp") == pytest.approx(0.5 - 0.3)
    # at 2 threads the nearest of Cusp's is still 1 thread, n 600; nobody has 2 threads: as before
    assert levels.at(2, 6000, "Cusp") == levels.at(2, 6000)
    # Heat2D at 600 moves its 6000 level the other way
    assert levels.at(1, 600, "Heat2D") == pytest.approx(2.0 + 0.3)
    # an IVP never trained on takes the nearest configurations of every IVP, as before
    assert levels.at(1, 6000, "InverterChain") == np.median([-0.3, -0.2, 2.0])


def test_trained_marks_the_rows_whose_level_is_their_ivps_own():
    rows = [{"threads": 1, "n": 700, IVP_NAME: "Cusp"}, {"threads": 1, "n": 6000, IVP_NAME: "Cusp"},
            {"threads": 2, "n": 600, IVP_NAME: "Cusp"}, {"threads": 1, "n": 700}]
    np.testing.assert_array_equal(POINTS.trained(rows), [True, False, True, False])


def test_two_methods_of_one_ivp_keep_levels_of_their_own():
    from hybridtune.learn.level import group_name
    rows = [{"threads": 1, "n": 6000, IVP_NAME: group_name("radauIIA7", "Cusp")}] * 2 \
        + [{"threads": 1, "n": 6000, IVP_NAME: group_name("gauss4", "Cusp")}] * 2
    levels = levels_of(np.array([0.0, 0.0, 0.693, 0.693]), np.array(["a", "a", "b", "b"]), rows)
    assert levels.of(rows).tolist() == [0.0, 0.0, 0.693, 0.693]
    assert levels.trained(rows).all()
    assert levels.at(1, 6000, group_name("radauIIA7", "Cusp")) == 0.0
    assert levels.at(1, 6000, group_name("gauss4", "Cusp")) == 0.693
    # a question about the IVP alone, or a point stored before methods were told apart, covers both
    assert levels.at(1, 6000, "Cusp") == pytest.approx(0.3465)
    assert Levels((("Cusp", 1.0, 1.0, 6000.0, 0.2),)).at(1, 6000, group_name("gauss4", "Cusp")) == 0.2
