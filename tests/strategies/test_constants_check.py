"""Hybrid's scale and stop: each store's grid replays what evaluate replays, a store chooses by the stated rule, and each direction scores one store's choice on the other."""

from __future__ import annotations

import pytest

from hybridtune.commands.evaluation_text import constants_lines
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.learn.prior import TRAINED_SCALE
from hybridtune.learn.table import Rows
from hybridtune.strategies import constants_check
from hybridtune.strategies.constants_check import Scores
from hybridtune.strategies.leave_one_out import evaluate

pytestmark = pytest.mark.slow
IVPS = ("Cusp", "InverterChain", "Wave1D")
D = HYBRID_STOP


def three(rows: Rows) -> Rows:
    return Rows(rows.frame[rows.frame["ivp"].isin(IVPS)].reset_index(drop=True),
                rows.feature_schema, rows.machine_sha256)


@pytest.fixture(scope="module")
def grid(fixture_rows):
    return constants_check.store_grid(three(fixture_rows), None, 1, scales=(TRAINED_SCALE, 1.0),
                                      stops=(HYBRID_STOP, 1.0))


def test_the_shipped_point_of_the_grid_is_what_evaluate_replays(grid, fixture_rows):
    shipped = next(s for s in grid["grid"] if (s.scale, s.stop) == (TRAINED_SCALE, HYBRID_STOP))
    evaluated = evaluate(three(fixture_rows))
    hybrid = evaluated.strategies["hybrid"]
    assert shipped.measured_mean == pytest.approx(hybrid["measured_mean"])
    assert shipped.loss_pct_mean == pytest.approx(hybrid["loss_pct_mean"])
    assert shipped.decisions == evaluated.reliability["decisions"]
    assert shipped.brier_skill == pytest.approx(evaluated.reliability["brier_skill"])
    assert grid["folds"] == len(IVPS) and grid["seeds"] == 1
    assert grid["ceiling_loss_pct"] == pytest.approx(
        evaluated.strategies["RunAll+3 rounds"]["loss_pct_mean"])


def test_a_wider_scale_changes_the_stop_chances(grid):
    by_point = {(s.scale, s.stop): s for s in grid["grid"]}
    assert len(by_point) == 4
    assert by_point[(TRAINED_SCALE, HYBRID_STOP)].brier_skill != \
        by_point[(1.0, HYBRID_STOP)].brier_skill
    for scores in grid["grid"]:
        assert 1 <= scores.measured_mean <= 32 and scores.loss_pct_mean >= 0


def scores(scale, stop, skill, loss, p90=1.0):
    return Scores(scale, stop, skill, loss, p90, 10.0, 100)


def test_a_store_chooses_the_best_skill_then_the_largest_stop_near_the_ceiling():
    grid = [scores(0.6, D, 0.10, 1.0), scores(0.6, 1.0, 0.10, 1.2),
            scores(1.0, D, 0.20, 1.1), scores(1.0, 1.0, 0.20, 1.4),
            scores(1.0, 2.0, 0.20, 1.5, p90=3.5)]
    # ceiling 0.8: within 0.5 points are losses up to 1.3; stop 2.0 breaks the 90th percentile
    assert constants_check.chosen(grid, 0.8) == (1.0, D)
    assert constants_check.chosen(grid, 1.0) == (1.0, 1.0)
    # nothing near the ceiling: the stop of least loss at the chosen scale
    assert constants_check.chosen(grid, 0.1) == (1.0, D)


def test_each_direction_scores_one_stores_choice_on_the_other():
    a = {"grid": [scores(TRAINED_SCALE, D, 0.1, 1.0), scores(1.0, D, 0.3, 1.1)],
         "chosen": (1.0, D), "ceiling_loss_pct": 0.9}
    b = {"grid": [scores(TRAINED_SCALE, D, 0.2, 0.7), scores(1.0, D, -0.1, 2.0)],
         "chosen": (TRAINED_SCALE, D), "ceiling_loss_pct": 0.4}
    found = constants_check.out_of_sample({"A": a, "B": b})
    assert set(found) == {"A -> B", "B -> A"}
    forth = found["A -> B"]
    assert forth["chosen"] == [1.0, D]
    assert forth["out_of_sample"]["brier_skill"] == -0.1
    assert forth["in_sample"]["brier_skill"] == 0.2
    assert forth["shipped"]["scale"] == TRAINED_SCALE and forth["ceiling_loss_pct"] == 0.4
    assert found["B -> A"]["out_of_sample"]["loss_pct_mean"] == 1.0
    lines = constants_lines({"directions": found})
    at = lines.index("  A -> B (the ceiling loses 0.40%):")
    assert lines[at + 2].split()[:4] == ["out", "of", "sample", "1.00"]
    assert lines[at + 2].split()[4:6] == [f"{D:g}", "-0.100"]
    assert lines[at + 3].split()[:4] == ["its", "own", "choice", f"{TRAINED_SCALE:.2f}"]


def by_configuration(squared):
    # 100 decisions per configuration, 30 of which saw the event: a constant chance scores 0.21
    return tuple((100, float(s), 30.0) for s in squared)


def point(scale, squared, measured):
    skill = 1 - sum(squared) / (100 * len(squared)) / 0.21
    return Scores(scale, D, skill, 1.0, 1.0, measured, 100 * len(squared), by_configuration(squared))


def test_a_scale_within_one_standard_error_of_the_best_skill_that_measures_less_is_chosen():
    wide = point(0.6, [15, 25, 12, 20, 18, 16], measured=41.0)
    narrow = point(0.4, [16, 22, 14, 21, 17, 19], measured=39.0)
    assert wide.brier_skill > narrow.brier_skill
    # the configurations disagree on which is better: the difference is within its noise
    assert constants_check.least_measured_near_best([wide, narrow]) is narrow
    assert constants_check.chosen([wide, narrow], 0.8) == (0.4, D)
    # every configuration scores the wide scale better by the same margin: the best skill stands
    clearly = point(0.4, [20, 30, 17, 25, 23, 21], measured=39.0)
    assert constants_check.least_measured_near_best([wide, clearly]) is wide
    # without configurations to resample, the best skill
    assert constants_check.least_measured_near_best(
        [scores(0.6, D, 0.12, 1.0), scores(0.4, D, 0.10, 1.0)]).scale == 0.6
