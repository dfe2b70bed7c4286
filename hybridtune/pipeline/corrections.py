"""Corrected predictions from the store's trained model: checked, rebuilt from its rows, applied."""

from __future__ import annotations

import math
from pathlib import Path

from hybridtune.describe.library import default_store
from hybridtune.errors import RequestError
from hybridtune.learn.correct import corrected_times
from hybridtune.learn.table import Z95
from hybridtune.pipeline.store_frames import machine_rows
from hybridtune.predict.features import FEATURE_SCHEMA
from hybridtune.store import Store


def require_model(path: str | None, machine_sha256: str, option: str = "--corrected",
                  any_machine: bool = False) -> str:
    """The store's path; refuse `option` (--corrected, --prior), before anything is written,
    where the store has no model of this version's feature schema for the machine file (with
    any_machine: for any machine file, as a model of other hardware serves --prior)."""
    path = path or str(default_store())
    if not Path(path).exists():
        raise RequestError(f"{option}: no store {path} (its models come from `hybridtune "
                           f"train --db {path}`)")
    with Store.open(path, "r") as store:
        models = store.frame("models", ("machine_sha256", "feature_schema"))
    machines = models["machine_sha256"] if not models.empty else models.assign(
        machine_sha256=[])["machine_sha256"]
    if any_machine and not models.empty and (models["feature_schema"] == FEATURE_SCHEMA).any():
        return path
    if not (machines == machine_sha256).any():
        others = sorted({sha[:12] for sha in machines})
        advice = (f"; it has models of machine file(s) {', '.join(others)}: run `hybridtune "
                  f"train --db {path} --machine FILE` with the scenario's machine file first"
                  if others else f": run `hybridtune train --db {path}` first")
        raise RequestError(f"{option}: the store {path} has no model for machine file "
                           f"{machine_sha256[:12]}{advice}")
    schemas = set(models["feature_schema"][machines == machine_sha256])
    if FEATURE_SCHEMA not in schemas:
        raise RequestError(f"{option}: the store {path} has models of feature schema "
                           f"{', '.join(sorted(map(str, schemas)))}; this version's is "
                           f"{FEATURE_SCHEMA}: run `hybridtune train --db {path}` again")
    return path


def prepared_corrections(path: str, machine_sha256: str) -> tuple:
    """What corrections need of the store: the rows of a machine file and its latest model
    (rebuilt); an error naming `hybridtune train` where there is no model."""
    from hybridtune.learn.persist import latest_models, load_model   # sklearn: 1 s to import
    rows, frames = machine_rows(path, machine_sha256)
    stored = latest_models(frames["models"], rows.machine_sha256)
    record = stored.get("gp") or stored.get("linear")
    if record is None:
        raise RequestError(f"--corrected: the store {path} has no model for machine file "
                           f"{rows.machine_sha256[:12]}: run `hybridtune train --db {path}` first")
    return record["model_id"], load_model(record, rows), rows.frame


def corrections_of(prepared: tuple, configurations) -> tuple[str, dict]:
    """The model used (its description) and, per configuration (method, IVP, n, ranks, threads),
    variant -> Corrected."""
    model_id, fitted, frame = prepared
    out = {}
    for method, ivp, n, ranks, threads in configurations:
        mine = frame[(frame["method"] == method) & (frame["ivp"] == ivp) & (frame["n"] == n)
                     & (frame["ranks"] == ranks) & (frame["threads"] == threads)]
        out[(method, ivp, n, ranks, threads)] = {item.variant: item
                                                 for item in corrected_times(fitted, mine)}
    note = f"{fitted.kind} model {model_id[:12]} fitted on {len(fitted.row_ids)} measured variants"
    if any(key[3] > 1 for key in configurations):
        trained = frame[frame["row_id"].isin(set(fitted.row_ids))]
        note += (f" ({int((trained['ranks'] > 1).sum())} of them on more than one rank: with "
                 "none, a multi-rank variant's correction is the model's prior, its interval wide)")
    if fitted.offset_spread:
        factor = math.exp(Z95 * fitted.offset_spread)
        note += ("; on a configuration it was trained on the intervals are its own; elsewhere "
                 "they hold its error on an IVP it has not measured, most of it (a factor of "
                 f"about {factor:.1f} either way) common to all variants of a configuration, so "
                 "their order is surer than the intervals' width")
    if any(item.measured_s is not None for found in out.values() for item in found.values()):
        note += "; a variant measured here holds its measurement (weighted against the model's spread)"
    return note, out
