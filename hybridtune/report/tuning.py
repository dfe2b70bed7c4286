"""The outcome of tuning one configuration: the variant chosen from the measured shortlist, as text and JSON."""

from __future__ import annotations

import math

from hybridtune.measure.runner import node_name
from hybridtune.report.ranking import configuration_title


def stored_measurements(store, config) -> dict:
    """id -> measurement row already in the store for this configuration on this node."""
    frame = store.frame("measurements")
    if frame.empty:
        return {}
    keep = ((frame["method"] == config.method.name) & (frame["ivp"] == config.ivp.name)
            & (frame["n"] == config.n) & (frame["threads"] == config.threads)
            & (frame["node"] == node_name()))
    return {row["id"]: row for row in frame[keep].to_dict("records")}


def _field(measurement, name):
    return measurement[name] if isinstance(measurement, dict) else getattr(measurement, name)


def chosen_line(config, ranking: list, shortlisted: list, measured: dict, new: int) -> tuple:
    """The fastest measured variant of the shortlist (failed ones never chosen), as a line and a record."""
    rows = []
    for p in shortlisted:
        m = measured.get(p.id)
        if m is None:
            continue
        status, median = _field(m, "status"), _field(m, "median_s")
        ok = status == "ok" and median is not None and math.isfinite(median)
        rows.append((p, status, median if ok else None))
    good = [(p, t) for p, status, t in rows if t is not None]
    failed = [(p.id, status) for p, status, t in rows if t is None]
    title = configuration_title(config)
    record = {"method": config.method.name, "ivp": config.ivp.name, "n": config.n,
              "threads": config.threads, "shortlisted": [p.id for p in shortlisted],
              "measured_now": new, "failed": failed, "chosen": None}
    if not good:
        return f"  {title}: no shortlisted variant measured ok ({len(failed)} failed)", record
    best, seconds = min(good, key=lambda x: x[1])
    record["chosen"] = {"id": best.id, "measured_s": seconds, "predicted_s": best.predicted_s,
                        "predicted_rank": best.rank}
    note = f", {len(failed)} failed" if failed else ""
    return (f"  chosen: {best.id}: measured {seconds:.4e} s/step (predicted {best.predicted_s:.4e}, "
            f"rank {best.rank}); {len(good)} of {len(shortlisted)} shortlisted measured ok, "
            f"{new} new{note}", record)
