"""The report's scaling figure: time per step against ranks, predicted (predict --scaling --json), simulated (SMPI points of jobs/bench_scaling.py) and measured (the store), one panel per IVP and size."""

from __future__ import annotations

import pandas as pd

from hybridtune.report.plots import Plot, _grid


def scaling_inputs(documents: list[dict]) -> tuple[list, list]:
    """(studies, simulated points) of the given JSON documents: `predict --scaling --json`
    output has studies; jobs/bench_scaling.py's has platforms with points."""
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


def scaling_plot(studies: list[dict], simulated: list[dict], measured: pd.DataFrame) -> Plot:
    """One panel per (IVP, n): predicted strong-scaling curves of the variants fastest at one
    and at the most ranks, SMPI's simulated steps of any variant as crosses, this store's
    measured medians of the same variants as dots."""
    keys = sorted({(s["ivp"], s["n"]) for s in studies} | {(p["ivp"], p["n"]) for p in simulated})
    figure, axes = _grid(len(keys), title="Time per step against ranks (one thread per rank)")
    drawn = set()
    for ax, (ivp, n) in zip(axes, keys):
        named = set()
        for study in (s for s in studies if (s["ivp"], s["n"]) == (ivp, n)):
            for variant in _shown(study):
                ranks = [p["ranks"] for p in variant["strong"]]
                ax.plot(ranks, [p["seconds"] for p in variant["strong"]], marker=".",
                        label=f"predicted {variant['variant']}")
                named.add(variant["variant"])
                drawn.add("predicted")
        mine = [p for p in simulated if (p["ivp"], p["n"]) == (ivp, n)]
        for variant in sorted({p["variant"] for p in mine})[:6]:
            points = sorted((p["ranks"], p["simulated_s"]) for p in mine if p["variant"] == variant)
            ax.plot(*zip(*points), linestyle="none", marker="x",
                    label=f"SMPI {variant}")
            named.add(variant)
            drawn.add("simulated")
        if not measured.empty:
            rows = measured[(measured["ivp"] == ivp) & (measured["n"] == n)
                            & (measured["id"].isin(named)) & (measured["threads"] == 1)]
            if not rows.empty:
                ax.plot(rows["ranks"], rows["median_s"], linestyle="none", marker="o",
                        color="black", label="measured")
                drawn.add("measured")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("s / step")
        ax.set_title(f"{ivp} n={n}")
        ax.legend(fontsize=6)
    parts = {"predicted": "lines: the analytic prediction (node ECM + the exchanges' model) of "
                          "the variants fastest on one rank and on the most ranks",
             "simulated": "crosses: SMPI's simulated step with the ECM compute injected",
             "measured": "dots: this store's measured medians of those variants"}
    absent = [name for name in parts if name not in drawn]
    caption = "; ".join(text for name, text in parts.items() if name in drawn)
    caption = caption[:1].upper() + caption[1:] + " (one thread per rank)." + (
        f" Not drawn: {', '.join(absent)} (none given or stored for these IVPs and sizes)."
        if absent else "")
    return Plot("scaling.png", "Scaling: predicted, simulated, measured", caption, figure)
