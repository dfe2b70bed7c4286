"""The strategies' targets checked on an evaluation's JSON, and its strategy table as text."""

from hybridtune.strategies.evaluation_targets import evaluation_targets, strategy_table_lines


def summary(measured, loss_max, loss_mean, score):
    return {"measured_mean": measured, "loss_pct_max": loss_max, "loss_pct_mean": loss_mean,
            "frac_loss_le_3pct": 1.0, "score": score,
            "over_seeds": {"loss_pct_mean": [0.1, 0.9], "score": [0.2, 0.8]}}


RESULT = {
    "strategies": {"RunAll": summary(32, 0, 0, -1.0), "hybrid": summary(12, 2.0, 0.5, 0.4),
                   "hybrid@12": summary(10, 4.0, 1.5, 0.3)},
    "first_pick_within_5pct": {"hybrid": 0.5},
    "reliability": {"bins": [{"chance": 0.5, "observed": 0.55}], "brier_skill": 0.1},
    "noise": {"source": "test", "seeds": 3}}


def test_every_target_is_checked():
    assert all(evaluation_targets(RESULT).values())
    worse = {**RESULT, "reliability": {"bins": [{"chance": 0.5, "observed": 0.7}]}}
    found = evaluation_targets(worse)
    assert not found["reliability_within_0.1_in_every_bin"] and not found["brier_skill_above_0"]


def test_the_strategy_table_has_a_line_per_strategy_with_its_spread():
    lines = strategy_table_lines(RESULT)
    assert lines[0] == "noise: test (3 seeds)" and len(lines) == 5
    assert lines[3].startswith("hybrid ") and "[0.10, 0.90]%, [0.20, 0.80]" in lines[3]
