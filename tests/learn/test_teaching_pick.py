"""A teaching pick tells the likely fastest variants apart, not the level they share."""

from __future__ import annotations

import numpy as np

from hybridtune.learn.belief import Belief
from hybridtune.learn.teaching_pick import contenders, teaching_pick


def test_the_teaching_pick_tells_the_likely_fastest_apart_not_their_common_level():
    # 0 and 1 are the likely fastest, their errors independent; 2 shares 0's error only; 3
    # shares both alike (their level: it tells their difference nothing); 3 is expected faster
    # than 2, so a pick by least expected time among the free would take it
    cov = np.array([[.04, 0, .036, .02], [0, .04, 0, .02], [.036, 0, .04, .018],
                    [.02, .02, .018, .04]])
    belief = Belief(np.array([-9.0, -9.0, -8.0, -8.5]), cov, {})
    chances = contenders(belief, [0, 1, 2, 3])
    assert chances[0] > 0.4 and chances[1] > 0.4 and chances[2] == chances[3] == 0.0
    assert teaching_pick(belief, [2, 3], [0, 1, 2, 3]) == 2
    # once 0 is measured, what is left to tell is 1's own error
    belief.observe(0, -9.0)
    assert teaching_pick(belief, [1, 2, 3], [0, 1, 2, 3]) == 1
    np.testing.assert_allclose(belief.covariance([1, 2], [2, 3]),
                               belief.joint([1, 2, 3])[1][:2, 1:])
