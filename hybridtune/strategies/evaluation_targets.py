"""The strategies' targets on whole-pool configurations under noise, checked on an evaluation's JSON."""

from __future__ import annotations


def evaluation_targets(result: dict) -> dict:
    """Each target met or not, from `hybridtune evaluate --json`'s result."""
    strategies = result["strategies"]
    hybrid, capped = strategies["hybrid"], strategies["hybrid@12"]
    others = {name: s["score"] for name, s in strategies.items() if not name.startswith("hybrid")}
    bins = result["reliability"].get("bins", [])
    return {
        "hybrid_loss_le_3pct_in_every_configuration": hybrid["loss_pct_max"] <= 3,
        "hybrid_mean_loss_le_1pct": hybrid["loss_pct_mean"] <= 1,
        "hybrid_measures_le_16": hybrid["measured_mean"] <= 16,
        "hybrid_capped_at_12_mean_loss_le_3pct": capped["loss_pct_mean"] <= 3,
        "hybrid_first_within_5pct_in_40pct": result["first_pick_within_5pct"].get("hybrid", 0) >= 0.4,
        "reliability_within_0.1_in_every_bin": all(abs(b["chance"] - b["observed"]) <= 0.1
                                                   for b in bins),
        "brier_skill_above_0": result["reliability"].get("brier_skill", -1) > 0,
        "hybrid_score_above_every_other": all(hybrid["score"] > s for s in others.values()),
    }


def strategy_table_lines(result: dict) -> list[str]:
    """The strategy table of the evaluation's JSON, with the spread over noise seeds, as text."""
    lines = [f"noise: {result['noise']['source']} ({result['noise']['seeds']} seeds)",
             f"{'strategy':<17} {'|L|':>6} {'loss max':>9} {'loss mean':>10} {'<=3%':>5} {'score':>6}"
             "  10th-90th over seeds: loss mean, score"]
    for name, s in result["strategies"].items():
        spread = s.get("over_seeds", {})
        low_high = (f"  [{spread['loss_pct_mean'][0]:.2f}, {spread['loss_pct_mean'][1]:.2f}]%, "
                    f"[{spread['score'][0]:.2f}, {spread['score'][1]:.2f}]" if spread else "")
        lines.append(f"{name:<17} {s['measured_mean']:6.1f} {s['loss_pct_max']:8.1f}% "
                     f"{s['loss_pct_mean']:9.2f}% {100 * s['frac_loss_le_3pct']:4.0f}% "
                     f"{s['score']:6.2f}{low_high}")
    return lines
