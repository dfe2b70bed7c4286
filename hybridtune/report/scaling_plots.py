"""The report's scaling figure: time per step against ranks, predicted, simulated and measured.

Predicted (predict --scaling --json), simulated (SMPI points) and measured (the store); one panel
per method, IVP and size.
"""

from __future__ import annotations

import pandas as pd

from hybridtune.learn.table import best_measurements
from hybridtune.report.plots import Plot, _grid


def scaling_inputs(documents: list[dict]) -> tuple[list, list]:
    """(studies, simulated points) of the given JSON documents: `predict --scaling --json`
    output has studies; `simulate --json`'s and jobs/bench_scaling.py's have platforms with
    points (pipeline/scaling_documents.py)."""
    studies, points = [], []
    for document in documents:
        studies += document.get("studies", [])
        for part in document.get("platforms", {}).values():
            points += [{**p, "platform": part.get("platform", "")} for p in part.get("points", [])
                       if p.get("status") == "ok"]
    return studies, points


def _shown(study: dict) -> list[dict]:
    """The variants of a study fastest at one rank and at the most ranks."""
    wanted = {study["best_strong"][0]["variant"], study["best_strong"][-1]["variant"]}
    return [v for v in study["variants"] if v["variant"] in wanted]


def _panel(item: dict) -> tuple:
    """A study's or simulated point's panel: (method, IVP, n); a point without a method ("")."""
    return (item.get("method") or "", item["ivp"], item["n"])


def scaling_plot(studies: list[dict], simulated: list[dict], measured: pd.DataFrame) -> Plot:
    """One panel per (method, IVP, n): predicted strong-scaling curves of the variants fastest at
    one and at the most ranks, SMPI's simulated steps of any variant as crosses, this store's
    measured times of the same variants as dots (one time per variant by learn.timing's rule:
    the mean of its passes, of one hardware, the most measured)."""
    keys = sorted({_panel(s) for s in studies} | {_panel(p) for p in simulated})
    times = best_measurements(measured) if not measured.empty else measured
    figure, axes = _grid(len(keys), title="Time per step against ranks (one thread per rank)")
    drawn = set()
    for ax, (method, ivp, n) in zip(axes, keys):
        named = set()
        for study in (s for s in studies if _panel(s) == (method, ivp, n)):
            for variant in _shown(study):
                ranks = [p["ranks"] for p in variant["strong"]]
                ax.plot(ranks, [p["seconds"] for p in variant["strong"]], marker=".",
                        label=f"predicted {variant['variant']}")
                named.add(variant["variant"])
                drawn.add("predicted")
        mine = [p for p in simulated if _panel(p) == (method, ivp, n)]
        for variant in sorted({p["variant"] for p in mine})[:6]:
            points = sorted((p["ranks"], p["simulated_s"]) for p in mine if p["variant"] == variant)
            ax.plot(*zip(*points), linestyle="none", marker="x",
                    label=f"SMPI {variant}")
            named.add(variant)
            drawn.add("simulated")
        if not times.empty:
            rows = times[(times["ivp"] == ivp) & (times["n"] == n)
                         & (times["method"] == method if method else True)
                         & (times["variant"].isin(named)) & (times["threads"] == 1)]
            if not rows.empty:
                ax.plot(rows["ranks"], rows["median_s"], linestyle="none", marker="o",
                        color="black", label="measured")
                drawn.add("measured")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("s / step")
        ax.set_title(f"{method} {ivp} n={n}".strip())
        ax.legend(fontsize=6)
    parts = {"predicted": "lines: the analytic prediction (node ECM + the exchanges' model) of "
                          "the variants fastest on one rank and on the most ranks",
             "simulated": "crosses: SMPI's simulated step with the ECM compute injected",
             "measured": "dots: this store's measured times of those variants (the mean of "
                         "their passes, of the hardware measured most)"}
    absent = [name for name in parts if name not in drawn]
    caption = "; ".join(text for name, text in parts.items() if name in drawn)
    caption = caption[:1].upper() + caption[1:] + " (one thread per rank)." + (
        f" Not drawn: {', '.join(absent)} (none given or stored for these IVPs and sizes)."
        if absent else "")
    return Plot("scaling.png", "Scaling: predicted, simulated, measured", caption, figure)
