"""`hybridtune report`: a store described as one HTML page with PNG plots.

The page is written whole into a folder or not at all.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from hybridtune.errors import RequestError
from hybridtune.pipeline.store_frames import machine_file_names, read_frames

PAGE = "index.html"

REPORT_SEEDS = 5        # noise draws the report replays the strategies under (evaluate: 20)


def add_arguments(sub) -> None:
    report = sub.add_parser("report", help="write an HTML page with plots describing a store "
                            "(typically a ground-truth store): strategies, model accuracy, "
                            "rankings, scaling")
    report.add_argument("--db", required=True, metavar="FILE", help="the store to describe")
    report.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="folder for index.html and the plots (new, empty, or holding a "
                             "previous report, which is replaced)")
    report.add_argument("--scaling", action="append", default=[], metavar="JSON",
                        help="scaling curves to draw beside the store's measurements: the "
                             "output of `predict --scaling --json` or data/bench/scaling.json "
                             "(repeatable)")


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


def read_scaling(paths: list[str]) -> list[dict]:
    """The --scaling JSON documents, each refused with its file named where it does not read."""
    documents = []
    for path in paths:
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RequestError(f"--scaling {path}: expected the JSON of `predict --scaling "
                               f"--json` or of jobs/bench_scaling.py ({exc})") from None
        if not isinstance(document, dict) or not ("studies" in document
                                                   or "platforms" in document):
            raise RequestError(f"--scaling {path}: expected a JSON object with 'studies' "
                               "(predict --scaling --json) or 'platforms' (bench_scaling)")
        wrong = _scaling_shape(document)
        if wrong:
            raise RequestError(f"--scaling {path}: {wrong}")
        documents.append(document)
    return documents


STUDY_KEYS = ("ivp", "n", "best_strong", "variants")
POINT_KEYS = ("ivp", "n", "ranks", "variant", "status", "simulated_s")


def _has(item, keys: tuple) -> bool:
    return isinstance(item, dict) and all(key in item for key in keys)


def _scaling_shape(document: dict) -> str:
    """What keeps a scaling document from being drawn ('' where nothing does), so that a
    malformed one is refused before the store is read rather than failing halfway."""
    studies = document.get("studies", [])
    if not isinstance(studies, list) or not all(_has(s, STUDY_KEYS) for s in studies):
        return f"expected 'studies' to be a list of studies, each with {', '.join(STUDY_KEYS)}"
    platforms = document.get("platforms", {})
    parts = list(platforms.values()) if isinstance(platforms, dict) else [None]
    if not all(isinstance(part, dict) and isinstance(part.get("points", []), list)
               and all(_has(p, POINT_KEYS) for p in part.get("points", [])) for part in parts):
        return ("expected 'platforms' to map each platform to an object whose 'points' each "
                f"have {', '.join(POINT_KEYS)}")
    return ""


def scaling_plots(documents: list[dict], measurements) -> list:
    from hybridtune.report.scaling_plots import scaling_inputs, scaling_plot
    studies, simulated = scaling_inputs(documents)
    if not studies and not simulated:
        return []
    ok = measurements[measurements["status"] == "ok"] if not measurements.empty else measurements
    return [scaling_plot(studies, simulated, ok)]


def build(frames: dict, store: str = "", scaling_only: bool = False) -> dict:
    """Everything the page shows: evaluation (or why not), drawn plots and missing ones, notes."""
    from hybridtune.strategies.leave_one_out import evaluate, regime_errors
    from hybridtune.strategies.noise import measured as measured_noise
    from hybridtune.learn.table import KEY, best_measurements, joined_rows
    from hybridtune.report import plots
    from hybridtune.report.plots import Missing
    measurements, predictions = frames["measurements"], frames["variant_predictions"]
    if measurements.empty and predictions.empty:
        why = (f"the store {store} holds neither measurements nor variant predictions (`tune` "
               "or `predict` writes them)")
        if not scaling_only:
            raise RequestError(f"{why}: nothing to report")
        return {"evaluation": None, "why": why, "plots": [], "missing": [], "regimes": {},
                "notes": [why + "; only the scaling curves are drawn"], "hardware": [],
                "counts": []}
    notes, drawn, missing = [], [], []
    rows, why = None, ""
    try:
        rows = joined_rows(predictions, measurements, runs=frames.get("runs"))
    except RequestError as error:
        why = str(error)
    best = best_measurements(measurements)
    ok = measurements[measurements["status"] == "ok"] if not measurements.empty else measurements
    if len(best) and ok["hardware_id"].nunique() > 1:
        left = int((ok["hardware_id"] != best["hardware_id"].iloc[0]).sum())
        notes.append(f"plots use hardware {best['hardware_id'].iloc[0]} (the most ok "
                     f"measurements); {left} ok measurements of other hardware are left out")
    evaluation = None
    if rows is not None and rows.measured.empty:
        why = "the store holds no ok measurement of a predicted variant"
    elif rows is not None:
        try:
            evaluation = evaluate(rows, noise=measured_noise(measurements), seeds=REPORT_SEEDS)
        except RequestError as error:
            why = str(error)
    measured = rows.measured if rows is not None else None
    if evaluation is not None and evaluation.predictions:
        evaluated = {p["ivp"] for p in evaluation.predictions}
        chosen = plots.representative(measured[measured["ivp"].isin(evaluated)])
        drawn += [plots.predicted_vs_measured(evaluation.predictions),
                  plots.ranking(evaluation.predictions, chosen),
                  plots.best_found(evaluation.curves)]
    else:
        reason = f"no evaluation ({why})"
        missing += [Missing("Predicted against measured", reason),
                    Missing("Ranking with uncertainty", reason),
                    Missing("Best-found curves", reason)]
    if best.empty:
        missing += [Missing("Time per component", "the store holds no ok measurement"),
                    Missing("Speedup", "the store holds no ok measurement")]
    else:
        features = {} if rows is None else dict(zip(
            map(tuple, rows.frame[list(KEY)].itertuples(index=False)), rows.frame["features"]))
        drawn.append(plots.time_per_component(plots.fastest(best), features))
        table = plots.speedups(best)
        if table.empty:
            counts = sorted(set(best["threads"].astype(int)))
            missing.append(Missing("Speedup", "every IVP and n was measured at one thread count "
                                   f"only ({', '.join(map(str, counts))}), so there is no "
                                   "speedup to show"))
        else:
            drawn.append(plots.speedup(table))
    if measured is not None and len(measured):
        drawn.append(plots.ecm_breakdown(measured, plots.representative(measured)))
    else:
        missing.append(Missing("ECM contributions", why or "no measured variant with an "
                               "offline prediction"))
    order = ["predicted_vs_measured.png", "ranking.png", "best_found.png",
             "time_per_component.png", "speedup.png", "ecm_breakdown.png"]
    drawn.sort(key=lambda plot: order.index(plot.file))
    regimes = {} if rows is None else {"machine_sha256": rows.machine_sha256,
                                       "regimes": regime_errors(rows)}
    return {"evaluation": evaluation, "why": why, "plots": drawn, "missing": missing,
            "regimes": regimes,
            "notes": notes, "hardware": _hardware(measurements) if len(measurements) else [],
            "counts": ([] if measurements.empty else
                       measurements.groupby(["status", "timing"]).size().reset_index(
                           name="count").to_dict("records"))}


def write_report(folder: Path, files: dict, plots: list) -> None:
    """Write the page and the plots into a staging folder beside `folder`, then put it in
    folder's place (a previous report is replaced only once the new one is whole)."""
    folder = Path(os.path.abspath(folder))        # "." and ".." resolved: the name is real
    parent = folder.parent
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=parent))
    old = parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.old"
    try:
        for plot in plots:
            plot.figure.savefig(staging / plot.file, format="png")
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        os.chmod(staging, 0o777 & ~_umask())
        if folder.exists():
            folder.rename(old)
        staging.rename(folder)
    except BaseException:
        if old.exists() and not folder.exists():
            old.rename(folder)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _named(regimes: dict, runs) -> dict:
    """The regime errors with the machine file's path as the runs name it."""
    if not regimes:
        return {}
    names = machine_file_names(runs)
    return {**regimes, "machine_file": names.get(regimes["machine_sha256"], "")}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def cmd_report(args) -> int:
    from hybridtune.report.html import page
    folder = check_output(args.output)
    documents = read_scaling(args.scaling)
    frames = read_frames(args.db, ("runs", "measurements", "variant_predictions"))
    content = build(frames, args.db, scaling_only=bool(documents))
    content["plots"] += scaling_plots(documents, frames["measurements"])
    runs = frames["runs"][["command", "host", "started_at"]].to_dict("records")
    text = page(args.db, runs, content["hardware"], content["counts"], content["evaluation"],
                content["why"], content["plots"], content["missing"], content["notes"],
                _named(content["regimes"], frames["runs"]))
    write_report(folder, {PAGE: text}, content["plots"])
    print(f"wrote {folder / PAGE} with {len(content['plots'])} plot(s): "
          f"{', '.join(plot.file for plot in content['plots'])}")
    for item in content["missing"]:
        print(f"not drawn: {item.title}: {item.reason}")
    return 0
