"""Report figures (matplotlib, Agg canvas, no pyplot) drawn from a store's plain data.

Frames of rows and an evaluation's lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hybridtune.learn.table import CONFIG, Z95, with_ranks

TOP = 10                    # variants in the ECM breakdown
COLUMNS = 3                 # subplots per row of a grid
ECM_PARTS = ("ecm_T_comp_s", "ecm_T_RegL1_s", "ecm_T_L1L2_s", "ecm_T_L2L3_s", "ecm_T_L3MEM_s")


@dataclass(frozen=True)
class Plot:
    """A drawn figure and what the page says about it."""
    file: str
    title: str
    caption: str
    figure: Figure


@dataclass(frozen=True)
class Missing:
    """A figure the report could not draw, and why."""
    title: str
    reason: str


def _grid(count: int, width: float = 4.6, height: float = 3.7, title: str = ""):
    """A figure with `count` axes in rows of COLUMNS (unused cells left empty)."""
    columns = max(1, min(COLUMNS, count))
    rows = max(1, math.ceil(count / columns))
    figure = Figure(figsize=(width * columns, height * rows + 0.6), dpi=100,
                    layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for extra in axes[count:]:
        extra.remove()
    if title:
        figure.suptitle(title, fontsize=13)
    return figure, list(axes[:count])


def layout_name(ranks: int, threads: int) -> str:
    """'T thread(s)' on one rank, 'P ranks x T thread(s)' on more."""
    name = f"{threads} thread{'s' * (threads != 1)}"
    return name if ranks == 1 else f"{ranks} ranks x {name}"


def _label(key: tuple, multi_method: bool) -> str:
    method, ivp, n, ranks, threads = key
    layout = f"t={threads}" if ranks == 1 else f"{ranks}x{threads}"
    return (f"{method} " if multi_method else "") + f"{ivp} n={n} {layout}"


def _of(frame: pd.DataFrame, key: tuple) -> pd.DataFrame:
    """The rows of one configuration."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in zip(CONFIG, key):
        mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def representative(measured: pd.DataFrame) -> dict:
    """Per IVP the configuration with the most measured variants (then the largest n, the fewest
    ranks, the fewest threads): ivp -> (method, ivp, n, ranks, threads)."""
    if measured.empty:
        return {}
    counts = with_ranks(measured).groupby(list(CONFIG)).size().reset_index(name="count")
    counts = counts.assign(_minus_ranks=-counts["ranks"], _minus_threads=-counts["threads"])
    counts = counts.sort_values(["count", "n", "_minus_ranks", "_minus_threads", "method"],
                                ascending=False, kind="stable")
    chosen = counts.drop_duplicates("ivp", keep="first").sort_values("ivp")
    return {row.ivp: (row.method, row.ivp, int(row.n), int(row.ranks), int(row.threads))
            for row in chosen.itertuples(index=False)}


def predicted_vs_measured(predictions: list) -> Plot:
    """Offline and out-of-sample corrected (gp) predictions against measured time, per IVP."""
    frame = pd.DataFrame(predictions)
    ivps = sorted(set(frame["ivp"]))
    figure, axes = _grid(len(ivps), title="Predicted against measured seconds per step "
                                          "(each IVP left out of training)")
    for ax, ivp in zip(axes, ivps):
        mine = frame[frame["ivp"] == ivp]
        measured = mine["median_s"].to_numpy(float)
        ax.scatter(measured, mine["offline"], s=14, marker="o", alpha=0.7, label="offline (ECM)")
        ax.scatter(measured, mine["gp"], s=14, marker="^", alpha=0.7, label="corrected (gp)")
        values = np.concatenate([measured, mine["offline"], mine["gp"]])
        values = values[np.isfinite(values) & (values > 0)]
        low, high = values.min() / 1.5, values.max() * 1.5
        ax.plot([low, high], [low, high], color="black", linewidth=0.8,
                label="predicted = measured")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_title(f"{ivp} ({len(mine)} measured rows)")
        ax.set_xlabel("measured s/step")
        ax.set_ylabel("predicted s/step")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    return Plot("predicted_vs_measured.png", "Predicted against measured",
                "Each point is a measured variant; the corrected prediction comes from a model "
                "trained on the other IVPs only. Points on the diagonal are exact.", figure)


def ranking(predictions: list, chosen: dict) -> Plot:
    """Per IVP, the chosen configuration's variants by corrected time with the 95% band and the
    measured times."""
    frame = pd.DataFrame(predictions)
    keys = [chosen[ivp] for ivp in sorted(chosen) if ivp in set(frame["ivp"])]
    multi = len({key[0] for key in keys}) > 1
    figure, axes = _grid(len(keys), title="Variants ranked by corrected time, with the 95% band")
    for ax, key in zip(axes, keys):
        mine = _of(frame, key)
        mine = mine.sort_values("gp", kind="stable")
        rank = np.arange(1, len(mine) + 1)
        corrected = mine["gp"].to_numpy(float)
        spread = np.exp(Z95 * mine["gp_std_log"].to_numpy(float))
        ax.fill_between(rank, corrected / spread, corrected * spread, alpha=0.25, step="mid",
                        label="95% band")
        ax.plot(rank, corrected, marker=".", linewidth=1, label="corrected (gp)")
        ax.scatter(rank, mine["median_s"], s=16, color="black", zorder=3, label="measured")
        ax.set_yscale("log")
        ax.set_title(_label(key, multi))
        ax.set_xlabel("variant, by corrected time")
        ax.set_ylabel("s/step")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    return Plot("ranking.png", "Ranking with uncertainty",
                "Per IVP, its configuration with the most measured variants: the variants in the "
                "order of the corrected prediction (out of sample), the band from the model's "
                "standard deviation of the log-time, and each variant's measured time.", figure)


def best_found(curves: dict) -> Plot:
    """Mean best-found time over the true best against the number of variants measured."""
    figure, (ax,) = _grid(1, width=7.5, height=4.8)
    markers = "o^sDvP*Xh<>"
    for index, (name, curve) in enumerate(curves.items()):
        x = np.arange(1, len(curve) + 1)
        if name == "random expectation":
            ax.plot(x, curve, linestyle="--", color="black", linewidth=1.5, label=name)
        else:        # markers tell apart strategies whose curves coincide
            ax.plot(x, curve, marker=markers[index % len(markers)], markersize=4,
                    markevery=max(1, len(curve) // 12), linewidth=1.2, label=name)
    ax.set_title("Best found so far, over the best of the pool (mean over configurations)")
    ax.set_xlabel("variants measured x")
    ax.set_ylabel("S(x) / t_best")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return Plot("best_found.png", "Best-found curves",
                "S(x): the fastest measured time among a strategy's first x measurements, over "
                "the fastest of the whole pool; 1 means the best variant has been found. A "
                "strategy that stops early is held at its final value.", figure)


def fastest(measured: pd.DataFrame) -> pd.DataFrame:
    """Per configuration its fastest measured variant's row."""
    order = with_ranks(measured).sort_values("median_s", kind="stable")
    return order.drop_duplicates(list(CONFIG), keep="first").sort_values(list(CONFIG))


def cache_sizes_in_n(features: list) -> dict:
    """Cache level -> the n at which one step's working set equals its size, from feature rows of
    one variant family (the median over the rows that have them)."""
    crossings: dict = {}
    for row in features:
        if not isinstance(row, dict) or not row.get("n"):
            continue
        for name, ratio in row.items():
            if name.startswith("ws_over_") and isinstance(ratio, (int, float)) and ratio > 0:
                crossings.setdefault(name[len("ws_over_"):], []).append(row["n"] / ratio)
    return {level: float(np.median(values)) for level, values in sorted(crossings.items())}


def time_per_component(best: pd.DataFrame, features: dict) -> Plot:
    """Seconds per step and component of the fastest variant against n, per IVP and layout (ranks
    x threads), with the n at which a step's working set (of one rank's block) fills each cache
    level. features: key -> feature dict."""
    best = with_ranks(best)
    ivps = sorted(set(best["ivp"]))
    multi = best["method"].nunique() > 1
    figure, axes = _grid(len(ivps), title="Time per component of the fastest measured variant")
    levels = 0
    for ax, ivp in zip(axes, ivps):
        mine = best[best["ivp"] == ivp]
        for index, ((method, ranks, threads), series) in enumerate(
                mine.groupby(["method", "ranks", "threads"])):
            color = f"C{index % 10}"
            series = series.sort_values("n")
            label = (f"{method} " if multi else "") + layout_name(ranks, threads)
            ax.plot(series["n"], series["median_s"] / series["n"], marker="o", color=color,
                    label=label)
            rows = [features.get(tuple(row)) for row in
                    series[list(CONFIG) + ["variant"]].itertuples(index=False)]
            for level, n_fill in cache_sizes_in_n(rows).items():
                levels += 1
                ax.axvline(n_fill, color=color, linestyle=":", linewidth=1)
                ax.annotate(f"{level} full", (n_fill, 1), xycoords=("data", "axes fraction"),
                            rotation=90, va="top", ha="right", fontsize=8, color=color)
        ax.set_xscale("log")
        ax.set_title(ivp)
        ax.set_xlabel("n (components)")
        ax.set_ylabel("s per step and component")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    lines = ("Dotted lines, in the colour of their layout: the n at which one step's "
             "working set (the variant's bytes per component times a rank's block) equals the "
             "share of a cache level that one of its threads has." if levels else
             "The store's predictions carry no working-set features, so no cache level is "
             "marked.")
    return Plot("time_per_component.png", "Time per component",
                f"The fastest measured variant at each n, its seconds per step divided by n "
                f"(the fastest of a sample where the pool was not measured whole). {lines}",
                figure)


def speedups(measured: pd.DataFrame) -> pd.DataFrame:
    """Per (method, IVP, n, ranks) measured at more than one thread count and per thread count t:
    over the variants measured both at the fewest threads and at t, the best time at the fewest
    threads over the best at t, so that a sample is not held against a whole pool (columns
    method, ivp, n, ranks, threads, base_threads, speedup, variants)."""
    out = []
    for (method, ivp, n, ranks), group in with_ranks(measured).groupby(
            ["method", "ivp", "n", "ranks"]):
        if group["threads"].nunique() < 2:
            continue
        base_threads = int(group["threads"].min())
        base = group[group["threads"] == base_threads].groupby("variant")["median_s"].min()
        for threads, mine in group.groupby("threads"):
            times = mine.groupby("variant")["median_s"].min()
            common = times.index.intersection(base.index)
            if common.empty:
                continue
            out.append({"method": method, "ivp": ivp, "n": int(n), "ranks": int(ranks),
                        "threads": int(threads),
                        "base_threads": base_threads,
                        "speedup": float(base[common].min() / times[common].min()),
                        "variants": len(common)})
    return pd.DataFrame(out, columns=["method", "ivp", "n", "ranks", "threads", "base_threads",
                                      "speedup", "variants"])


def speedup(table: pd.DataFrame) -> Plot:
    """Speedup of the best variant against threads, per IVP and n."""
    ivps = sorted(set(table["ivp"]))
    multi = table["method"].nunique() > 1
    figure, axes = _grid(len(ivps), title="Speedup against threads, over the same variants")
    for ax, ivp in zip(axes, ivps):
        mine = table[table["ivp"] == ivp]
        for (method, n, ranks), series in mine.groupby(["method", "n", "ranks"]):
            series = series.sort_values("threads")
            on = f" on {ranks} ranks" if ranks > 1 else ""
            ax.plot(series["threads"], series["speedup"], marker="o",
                    label=(f"{method} " if multi else "") + f"n={n}{on} "
                    f"({int(series['variants'].min())} variants)")
        threads = np.array(sorted(set(mine["threads"])), dtype=float)
        base = float(mine["base_threads"].min())
        ax.plot(threads, threads / base, linestyle="--", color="gray", label="ideal")
        ax.set_title(ivp)
        ax.set_xlabel("threads")
        ax.set_ylabel(f"best at {int(base)} thread{'s' * (base != 1)} / best at t threads")
        ax.set_xticks(threads)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    return Plot("speedup.png", "Speedup",
                "For each IVP and n measured at several thread counts: over the variants measured "
                "both at the fewest threads and at t threads, the fastest one's time at the "
                "fewest threads over the fastest one's at t (where t threads were measured on a "
                "sample, only that sample counts; the legend gives the fewest variants compared).",
                figure)


def _ecm(rows: pd.DataFrame, part: str) -> np.ndarray:
    """One ECM contribution (seconds per step) of each row, 0 where the feature row lacks it."""
    return np.array([float(f.get(part) or 0.0) if isinstance(f, dict) else 0.0
                     for f in rows["features"]])


def ecm_breakdown(measured: pd.DataFrame, chosen: dict) -> Plot:
    """The ECM contributions (stacked) of a configuration's TOP fastest measured variants, beside
    their measured time and offline prediction, one configuration per IVP."""
    keys = [chosen[ivp] for ivp in sorted(chosen)]
    multi = len({key[0] for key in keys}) > 1
    figure, axes = _grid(len(keys), width=5.2, height=4.2,
                         title=f"ECM contributions of the {TOP} fastest measured variants")
    tops = [_of(measured, key).sort_values("median_s", kind="stable").head(TOP) for key in keys]
    parts = [part for part in ECM_PARTS
             if any(_ecm(top, part).any() for top in tops)]       # contributions never zero
    for ax, key, mine in zip(axes, keys, tops):
        rank = np.arange(1, len(mine) + 1)
        bottom = np.zeros(len(mine))
        for part in parts:
            values = _ecm(mine, part)
            ax.bar(rank - 0.2, values, width=0.4, bottom=bottom,
                   color=f"C{ECM_PARTS.index(part)}", label=part[len("ecm_"):-len("_s")])
            bottom += values
        ax.bar(rank + 0.2, mine["median_s"], width=0.4, color="black", alpha=0.75,
               label="measured")
        ax.scatter(rank - 0.2, mine["predicted_s"], marker="_", s=220, color="red", zorder=3,
                   label="offline prediction")
        ax.set_xticks(rank)
        ax.set_title(_label(key, multi))
        ax.set_xlabel("measured rank")
        ax.set_ylabel("s/step")
        ax.grid(True, axis="y", alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=len(names), fontsize=9)
    return Plot("ecm_breakdown.png", "ECM contributions",
                f"Per IVP, its configuration with the most measured variants: the {TOP} fastest "
                "measured, left bar the ECM contributions in seconds per step stacked (the ECM "
                "model overlaps in-core time with data transfers, so its prediction, the red "
                "mark, can be below the stack), right bar the measured time.", figure)
