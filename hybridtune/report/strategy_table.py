"""An evaluation's strategy table as Markdown: docs/benchmarks.md shows it as rendered from the JSON."""

from __future__ import annotations


def strategy_markdown(strategies: dict) -> list[str]:
    """Per strategy of `evaluate --json`'s strategies: measured, the loss's mean, median, 90th
    percentile and maximum, the shares within 1% and 3%, and the score."""
    lines = ["| strategy | \\|L\\| mean | loss mean | median | p90 | max | <= 1% | <= 3% | score |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, s in strategies.items():
        lines.append(f"| {name} | {s['measured_mean']:.1f} | {s['loss_pct_mean']:.2f}% | "
                     f"{s['loss_pct_median']:.2f}% | {s['loss_pct_p90']:.2f}% | "
                     f"{s['loss_pct_max']:.1f}% | {100 * s['frac_loss_le_1pct']:.0f}% | "
                     f"{100 * s['frac_loss_le_3pct']:.0f}% | {s['score']:.2f} |")
    return lines
