"""Each variant's first timing in a store: what a pass measured before any re-timing."""

from __future__ import annotations

from pathlib import Path

from hybridtune.store import Store


def first_timings(store_path: Path) -> dict:
    """ivp -> variant id -> seconds per step of its first ok timing alone (re-timings left out)."""
    with Store.open(store_path, "r") as store:
        frame = store.frame("measurements")
    out: dict = {}
    for row in frame.to_dict("records"):
        if row["status"] == "ok" and row["timing"] == "alone":
            out.setdefault(row["ivp"], {}).setdefault(row["id"], float(row["median_s"]))
    return out
