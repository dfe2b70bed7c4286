"""Learning rows from the store's frames: feature rows joined to the measured times.

Each variant prediction's feature row is joined to the same variant's time in its configuration
(learn/timing's rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hybridtune.errors import RequestError
from hybridtune.learn import timing
from hybridtune.learn.level import IVP_NAME, group_name

CONFIG = ("method", "ivp", "n", "ranks", "threads")
KEY = CONFIG + ("variant",)
PREDICTION_COLUMNS = KEY + ("predicted_s", "features")   # what learning reads of a prediction
MEASUREMENT_COLUMNS = ("row_id", "id") + CONFIG + (       # and of a measurement
    "status", "median_s", "ci_low_s", "ci_high_s", "ci_rel", "generator_version", "code_sha256",
    "build_id", "hardware_id", "timing", "compiler_flags", "run_id")
POOL_MEDIAN = "pool_median_predicted_s"   # derived when read, never stored
Z95 = timing.Z95


@dataclass(frozen=True)
class Rows:
    """Variant predictions with their feature rows and, where measured, the measurement.

    frame columns: method, ivp, n, ranks, threads, variant, predicted_s, features (dict), and for measured
    rows row_id, median_s, ci_rel, ci_low_s, ci_high_s, passes, retimed_s, retimed_ci_rel,
    hardware_id, code_sha256, build_id (NaN where unmeasured); median_s is the mean of passes of
    the first timings (learn/timing), the time every model and replay uses.
    """
    frame: pd.DataFrame
    feature_schema: str
    machine_sha256: str
    every: pd.DataFrame | None = None   # every ok measurement with its prediction (by row_id)

    @property
    def measured(self) -> pd.DataFrame:
        return self.frame[self.frame["median_s"].notna()]

    def configurations(self) -> list[tuple]:
        return sorted(set(map(tuple, self.frame[list(CONFIG)].itertuples(index=False))))

    def target(self) -> np.ndarray:
        """log(measured / predicted) of the measured rows, in their order."""
        measured = self.measured
        return np.log(measured["median_s"].to_numpy(float) / measured["predicted_s"].to_numpy(float))


def latest_predictions(predictions: pd.DataFrame, machine_sha256: str | None = None
                       ) -> tuple[pd.DataFrame, str, str]:
    """Per (method, IVP, n, ranks, threads, variant) the last stored prediction with a feature row, of one
    machine file (the given one, else the last one predicted with) and one feature schema; one
    with the barrier cost before one without."""
    predictions = with_ranks(predictions)
    if predictions.empty:
        raise RequestError("the store holds no variant predictions: run `hybridtune "
                           "predict` (or tune) on it first")
    features = predictions["features"]
    usable = predictions[features.map(lambda f: isinstance(f, dict) and "feature_schema" in f)
                         & predictions["predicted_s"].notna()]
    if usable.empty:
        raise RequestError("the store's variant predictions have no feature rows (written before "
                           "schema 4): run `hybridtune predict` on it again to add them")
    machines = usable["features"].map(lambda f: f["machine_sha256"])
    if machine_sha256 is None:      # the machine file predicted with last (a fixed probe, say)
        machine_sha256 = machines.iloc[-1]
    if not (machines == machine_sha256).any():
        held = ", ".join(sha[:12] for sha in dict.fromkeys(machines))
        raise RequestError(f"the store has no predictions for machine file {machine_sha256[:12]} "
                           f"(it has predictions of {held})")
    usable = usable[machines == machine_sha256]
    schemas = usable["features"].map(lambda f: f["feature_schema"])
    schema = schemas.iloc[-1]
    usable = usable[schemas == schema]
    # a prediction made where the machine's barrier cost was not known (predict with another
    # host's machine file) does not displace one that has it
    complete = usable["features"].map(lambda f: not (f.get("barriers", 0) and not f.get("t_com_s")))
    latest = usable.assign(_complete=complete.to_numpy()).sort_values("_complete", kind="stable")
    latest = latest.drop_duplicates(list(KEY), keep="last")
    latest = latest[list(KEY) + ["predicted_s", "features"]].reset_index(drop=True)
    return with_derived(latest), schema, machine_sha256


def with_derived(frame: pd.DataFrame) -> pd.DataFrame:
    """Each feature row (copied) with POOL_MEDIAN, the median prediction of its configuration's
    predicted variants (where a variant stands within its pool), and IVP_NAME (its method and IVP:
    the group of its level)."""
    medians = frame.groupby(list(CONFIG))["predicted_s"].transform("median").to_numpy(float)
    return frame.assign(features=[
        {**features, POOL_MEDIAN: float(median), IVP_NAME: group_name(method, ivp)}
        for features, median, method, ivp in zip(frame["features"], medians, frame["method"],
                                                 frame["ivp"])])


def with_ranks(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its ranks column, 1 where a row (or a frame built before ranks) has none."""
    if "ranks" not in frame:
        return frame.assign(ranks=1)
    return frame.assign(ranks=frame["ranks"].fillna(1).astype(int))


def _ok(measurements: pd.DataFrame) -> pd.DataFrame:
    """The rows with status ok and a positive time."""
    return measurements[(measurements["status"] == "ok") & measurements["median_s"].notna()
                        & (measurements["median_s"] > 0)]


def ok_measurements(measurements: pd.DataFrame, hardware_id: str | None = None) -> pd.DataFrame:
    """The ok measurements of one hardware (the given one, else the one with most ok rows), the
    variant id as `variant`."""
    measurements = with_ranks(measurements)
    if measurements.empty:
        return measurements.assign(variant=[])
    ok = _ok(measurements)
    if ok.empty:
        return ok.rename(columns={"id": "variant"})
    if hardware_id is None:
        hardware_id = ok["hardware_id"].value_counts().index[0]
    return ok[ok["hardware_id"] == hardware_id].rename(columns={"id": "variant"})


def best_measurements(measurements: pd.DataFrame, hardware_id: str | None = None) -> pd.DataFrame:
    """Per (method, IVP, n, ranks, threads, variant) its time by the one rule of learn/timing, of one
    hardware (see ok_measurements): the mean of passes of its first timings (median_s, the
    interval spanning them, passes), and retimed_s, retimed_ci_rel of its configuration's latest
    interleaved re-timing round (NaN where it was not re-timed)."""
    ok = ok_measurements(measurements, hardware_id)
    if ok.empty:
        return ok.assign(passes=[], retimed_s=[], retimed_ci_rel=[])
    first = timing.mean_of_passes(ok[ok["timing"] != timing.RETIMED], list(KEY))
    retimed = timing.latest_retimings(ok[ok["timing"] == timing.RETIMED], list(CONFIG))
    retimed = retimed.drop_duplicates(list(KEY), keep="last")
    retimed = retimed[list(KEY) + ["median_s", "ci_rel"]].rename(
        columns={"median_s": "retimed_s", "ci_rel": "retimed_ci_rel"})
    return first.merge(retimed, on=list(KEY), how="left")


def paired_hardware(measurements: pd.DataFrame, runs: pd.DataFrame | None,
                    machine_sha256: str) -> str | None:
    """The hardware whose ok measurements were taken by runs with this machine file, the one with
    most where several (a merged store holds each host's runs with its own machine file); None
    where no run names the machine file of a measured row (the most measured hardware then)."""
    if runs is None or runs.empty or measurements.empty or "machine_sha256" not in runs:
        return None
    machine_of = dict(zip(runs["run_id"], runs["machine_sha256"]))
    ok = _ok(measurements)
    mine = ok[ok["run_id"].map(machine_of) == machine_sha256]
    return None if mine.empty else mine["hardware_id"].value_counts().index[0]


def joined_rows(predictions: pd.DataFrame, measurements: pd.DataFrame,
                machine_sha256: str | None = None, hardware_id: str | None = None,
                runs: pd.DataFrame | None = None) -> Rows:
    """Every latest prediction with its best measurement where there is one: predictions of one
    machine file and measurements of one hardware, that machine file's (paired_hardware, by the
    runs) where hardware_id is not given."""
    latest, schema, machine = latest_predictions(predictions, machine_sha256)
    if hardware_id is None:
        hardware_id = paired_hardware(measurements, runs, machine)
    best = best_measurements(measurements, hardware_id)
    numbers = ("median_s", "ci_rel", "ci_low_s", "ci_high_s", "passes", "retimed_s", "retimed_ci_rel")
    columns = list(KEY) + list(numbers) + ["row_id", "hardware_id", "code_sha256", "build_id"]
    if best.empty:
        best = pd.DataFrame({name: pd.Series(dtype=float if name in numbers else object)
                             for name in columns})
    frame = latest.merge(best[columns], on=list(KEY), how="left")
    every = ok_measurements(measurements, hardware_id)
    firsts = list(KEY) + list(numbers[:4]) + ["row_id", "hardware_id", "code_sha256", "build_id"]
    every = latest.merge(every[firsts], on=list(KEY)) if not every.empty else frame.iloc[:0]
    return Rows(frame, schema, machine, every)


def hardware_name(measurements: pd.DataFrame, hardware_id: str | None = None) -> str | None:
    """The CPU model the measurements (of hardware_id, where given) name, or None."""
    if "hardware" not in measurements:
        return None
    rows = measurements if hardware_id is None else \
        measurements[measurements["hardware_id"] == hardware_id]
    return next((h.get("model") for h in rows["hardware"] if isinstance(h, dict) and h.get("model")),
                None)


def machine_files(predictions: pd.DataFrame) -> list[str]:
    """The machine files (sha256) the store's feature rows were predicted with, first used first."""
    found: dict = {}
    for features in predictions["features"] if not predictions.empty else []:
        if isinstance(features, dict) and "machine_sha256" in features:
            found.setdefault(features["machine_sha256"], None)
    return list(found)
