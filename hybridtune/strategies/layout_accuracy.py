"""The correction model per layout of ranks and threads, one IVP left out at a time.

For each IVP, a Gaussian process trained on the other IVPs' rows of every layout, and one trained
on their one-rank rows alone; per layout the median relative error on the left-out IVP of the
offline prediction and of each corrected one.
"""

from __future__ import annotations

import numpy as np

from hybridtune.learn.table import Rows
from hybridtune.learn.train import fit
from hybridtune.strategies.leave_one_out import left_out


def left_out_errors(rows: Rows, ivp: str) -> dict:
    """"RANKSxTHREADS" -> predictor -> median |predicted / measured - 1| on ivp's rows."""
    train, test = left_out(rows, ivp)
    variants, features = test["variant"].tolist(), test["features"].tolist()
    times = test["median_s"].to_numpy(float)
    predicted = test["predicted_s"].to_numpy(float)
    found = {"offline": predicted}
    one_rank = Rows(train.frame[train.frame["ranks"] == 1], rows.feature_schema,
                    rows.machine_sha256)
    for name, training in (("all_layouts", train), ("one_rank_only", one_rank)):
        model = fit(training, "gp", left_out=ivp)
        found[name] = predicted * np.exp(model.correction(variants, features)[0])
    return {f"{ranks}x{threads}": {name: float(np.median(np.abs(values[index] / times[index] - 1)))
                                   for name, values in found.items()}
            for (ranks, threads), index in test.groupby(["ranks", "threads"]).indices.items()}


def layout_corrections(rows: Rows, on_ivp=None) -> dict:
    """Every IVP left out in turn (on_ivp(ivp, its errors) told of each): per layout, per IVP."""
    out: dict = {}
    for ivp in sorted(set(rows.measured["ivp"])):
        errors = left_out_errors(rows, ivp)
        for layout, by_predictor in errors.items():
            out.setdefault(layout, {})[ivp] = by_predictor
        if on_ivp:
            on_ivp(ivp, errors)
    return {"model": "gp, each IVP left out in turn", "median_rel_error": out}
