"""`report`: a store described as one HTML page with PNG plots, assembled and written whole."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hybridtune.errors import RequestError
from hybridtune.learn import timing
from hybridtune.learn.table import KEY, best_measurements, joined_rows, with_ranks
from hybridtune.pipeline.atomic_files import replace_folder
from hybridtune.pipeline.scaling_documents import read_scaling
from hybridtune.pipeline.store_frames import machine_file_names, read_frames
from hybridtune.report import plots
from hybridtune.report.html import page
from hybridtune.report.plots import Missing
from hybridtune.report.scaling_plots import scaling_inputs, scaling_plot
from hybridtune.strategies.leave_one_out import evaluate, regime_errors
from hybridtune.strategies.noise import measured as measured_noise

PAGE = "index.html"
REPORT_SEEDS = 5        # noise draws the report replays the strategies under (evaluate: 20)
PLOT_ORDER = ["predicted_vs_measured.png", "ranking.png", "best_found.png",
              "time_per_component.png", "speedup.png", "ecm_breakdown.png"]


def check_output(output: str) -> Path:
    """The report folder, refused when it is a file or a non-empty folder without a report."""
    folder = Path(output)
    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise RequestError(f"-o {output}: expected a folder, found a file")
        if any(folder.iterdir()) and not (folder / PAGE).is_file():
            raise RequestError(f"-o {output}: the folder is not empty and holds no previous "
                               f"report ({PAGE}); choose a new or empty folder")
    parent = Path(os.path.abspath(folder)).parent
    if not parent.is_dir():
        raise RequestError(f"-o {output}: expected an existing folder {parent} to write it in")
    return folder


def _hardware(measurements) -> list:
    out = []
    for hardware_id, group in measurements.groupby("hardware_id", sort=False):
        facts = next((h for h in group["hardware"] if isinstance(h, dict)), {})
        out.append({"hardware_id": hardware_id, "model": facts.get("model", ""),
                    "vendor": facts.get("vendor", ""), "caches": facts.get("caches", []),
                    "measurements": len(group)})
    return out


def _ok(measurements):
    return measurements[measurements["status"] == "ok"] if not measurements.empty \
        else measurements


def scaling_plots(documents: list[dict], measurements) -> list:
    """The scaling plot of the documents beside the store's ok measurements (none: no plot)."""
    studies, simulated = scaling_inputs(documents)
    if not studies and not simulated:
        return []
    return [scaling_plot(studies, simulated, _ok(measurements))]


@dataclass
class _Page:
    """The page's parts as build() gathers them."""
    evaluation: object = None
    why: str = ""
    drawn: list = None
    missing: list = None
    notes: list = None


def _evaluated(rows, measurements, part: _Page) -> None:
    if rows is not None and rows.measured.empty:
        part.why = "the store holds no ok measurement of a predicted variant"
    elif rows is not None:
        try:
            part.evaluation = evaluate(rows, noise=measured_noise(measurements),
                                       seeds=REPORT_SEEDS)
        except RequestError as error:
            part.why = str(error)


def _evaluation_plots(evaluation, measured, part: _Page) -> None:
    if evaluation is not None and evaluation.predictions:
        evaluated = {p["ivp"] for p in evaluation.predictions}
        chosen = plots.representative(measured[measured["ivp"].isin(evaluated)])
        part.drawn += [plots.predicted_vs_measured(evaluation.predictions),
                       plots.ranking(evaluation.predictions, chosen),
                       plots.best_found(evaluation.curves)]
    else:
        reason = f"no evaluation ({part.why})"
        part.missing += [Missing("Predicted against measured", reason),
                         Missing("Ranking with uncertainty", reason),
                         Missing("Best-found curves", reason)]


def _measurement_plots(best, rows, part: _Page) -> None:
    if best.empty:
        part.missing += [Missing("Time per component", "the store holds no ok measurement"),
                         Missing("Speedup", "the store holds no ok measurement")]
        return
    features = {} if rows is None else dict(zip(
        map(tuple, rows.frame[list(KEY)].itertuples(index=False)), rows.frame["features"]))
    part.drawn.append(plots.time_per_component(plots.fastest(best), features))
    table = plots.speedups(best)
    if table.empty:
        counts = sorted(set(best["threads"].astype(int)))
        part.missing.append(Missing("Speedup", "every IVP and n was measured at one thread count "
                                    f"only ({', '.join(map(str, counts))}), so there is no "
                                    "speedup to show"))
    else:
        part.drawn.append(plots.speedup(table))


def _ecm_plot(measured, part: _Page) -> None:
    if measured is not None and len(measured):
        part.drawn.append(plots.ecm_breakdown(measured, plots.representative(measured)))
    else:
        part.missing.append(Missing("ECM contributions", part.why or "no measured variant with "
                                    "an offline prediction"))


def _empty(store: str, scaling_only: bool) -> dict:
    why = (f"the store {store} holds neither measurements nor variant predictions (`tune` "
           "or `predict` writes them)")
    if not scaling_only:
        raise RequestError(f"{why}: nothing to report")
    return {"evaluation": None, "why": why, "plots": [], "missing": [], "regimes": {},
            "notes": [why + "; only the scaling curves are drawn"], "hardware": [],
            "counts": []}


def _hardware_note(best, measurements) -> list:
    ok = _ok(measurements)
    if len(best) and ok["hardware_id"].nunique() > 1:
        left = int((ok["hardware_id"] != best["hardware_id"].iloc[0]).sum())
        return [f"plots use hardware {best['hardware_id'].iloc[0]} (the most ok "
                f"measurements); {left} ok measurements of other hardware are left out"]
    return []


def production_runs(measurements) -> list[dict]:
    """Each production measurement (store import) beside the tuning's first timing of the same
    variant and configuration on the same hardware (the geometric mean of its passes; None where
    tuning never timed it)."""
    if measurements.empty:
        return []
    ok = with_ranks(measurements[measurements["status"] == "ok"])
    key = ["id", "method", "ivp", "n", "ranks", "threads", "hardware_id"]
    firsts = ok[~ok["timing"].isin(timing.NOT_TUNING_FIRST)].groupby(key)["median_s"].apply(
        lambda s: float(np.exp(np.log(s.astype(float)).mean())))
    out = []
    for row in ok[ok["timing"] == timing.PRODUCTION].to_dict("records"):
        tuned = firsts.get(tuple(row[k] for k in key))
        out.append({"variant": row["id"], "method": row["method"], "ivp": row["ivp"],
                    "n": int(row["n"]), "ranks": int(row["ranks"]),
                    "threads": int(row["threads"]), "median_s": float(row["median_s"]),
                    "steps": int(row["repetitions"]), "node": row["node"], "tuned_s": tuned,
                    "ratio": None if tuned is None else float(row["median_s"]) / tuned})
    return out


def build(frames: dict, store: str = "", scaling_only: bool = False) -> dict:
    """Everything the page shows: evaluation (or why not), drawn plots and missing ones, notes."""
    measurements, predictions = frames["measurements"], frames["variant_predictions"]
    if measurements.empty and predictions.empty:
        return _empty(store, scaling_only)
    part, rows = _Page(drawn=[], missing=[]), None
    try:
        rows = joined_rows(predictions, measurements, runs=frames.get("runs"))
    except RequestError as error:
        part.why = str(error)
    best = best_measurements(measurements)
    part.notes = _hardware_note(best, measurements)
    _evaluated(rows, measurements, part)
    measured = rows.measured if rows is not None else None
    _evaluation_plots(part.evaluation, measured, part)
    _measurement_plots(best, rows, part)
    _ecm_plot(measured, part)
    part.drawn.sort(key=lambda plot: PLOT_ORDER.index(plot.file))
    regimes = {} if rows is None else {"machine_sha256": rows.machine_sha256,
                                       "regimes": regime_errors(rows)}
    return {"evaluation": part.evaluation, "why": part.why, "plots": part.drawn,
            "missing": part.missing, "regimes": regimes, "notes": part.notes,
            "hardware": _hardware(measurements) if len(measurements) else [],
            "production": production_runs(measurements),
            "counts": ([] if measurements.empty else
                       measurements.groupby(["status", "timing"]).size().reset_index(
                           name="count").to_dict("records"))}


def write_report(folder: Path, files: dict, drawn: list) -> None:
    """Write the page and the plots into a staging folder beside `folder`, then put it in
    folder's place (a previous report is replaced only once the new one is whole)."""
    def fill(staging: Path) -> None:
        for plot in drawn:
            plot.figure.savefig(staging / plot.file, format="png")
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")

    replace_folder(folder, fill)


def _named(regimes: dict, runs) -> dict:
    """The regime errors with the machine file's path as the runs name it."""
    if not regimes:
        return {}
    names = machine_file_names(runs)
    return {**regimes, "machine_file": names.get(regimes["machine_sha256"], "")}


@dataclass(frozen=True)
class Report:
    """Where the page was written, its plots and the plots it could not draw (with why)."""
    page: Path
    plots: list
    missing: list


def write_store_report(db: str, output: str, scaling: list[str]) -> Report:
    """The report of a store (and scaling documents) written into output, checked first."""
    folder = check_output(output)
    documents = read_scaling(scaling)
    frames = read_frames(db, ("runs", "measurements", "variant_predictions"))
    content = build(frames, db, scaling_only=bool(documents))
    content["plots"] += scaling_plots(documents, frames["measurements"])
    runs = frames["runs"][["command", "host", "started_at"]].to_dict("records")
    text = page(db, runs, content["hardware"], content["counts"], content["evaluation"],
                content["why"], content["plots"], content["missing"], content["notes"],
                _named(content["regimes"], frames["runs"]), content["production"])
    write_report(folder, {PAGE: text}, content["plots"])
    return Report(folder / PAGE, content["plots"], content["missing"])
