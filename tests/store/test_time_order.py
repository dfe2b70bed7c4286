"""The newest row is the one appended last, in a store and in a merge of stores given in any order; a row id says nothing of time."""

from __future__ import annotations

import time

from hybridtune.pipeline.tuning_run import latest_round, stored_rows
from hybridtune.learn.table import best_measurements
from hybridtune.store import Store, merge_stores

from store_support import measurement


def retiming(row_id: str, variant: str, code: str, median_s: float) -> dict:
    return measurement(row_id, id=variant, code_sha256=code * 64, timing="interleaved",
                       median_s=median_s, ci_low_s=median_s * 0.99, ci_high_s=median_s * 1.01,
                       ci_rel=0.01)


def first_timing(row_id: str, variant: str, code: str, median_s: float) -> dict:
    return {**retiming(row_id, variant, code, median_s), "timing": "alone"}


# The older round favours B, the newer one A; the older round's row ids sort after the newer's.
OLD_ROUND = [retiming("ff01", "A", "a", 1.10e-4), retiming("ff02", "B", "b", 1.00e-4)]
NEW_ROUND = [retiming("0001", "A", "a", 1.00e-4), retiming("0002", "B", "b", 1.10e-4)]
FIRSTS = [first_timing("f0a", "A", "a", 1.05e-4), first_timing("f0b", "B", "b", 1.05e-4)]


def write_run(path, rows: list) -> str:
    with Store.open(path, "a", run={"command": "tune"}) as store:
        store.append_many("measurements", rows)
        return store.run_id


def chosen(frame) -> str:
    best = best_measurements(frame)
    return best.sort_values("retimed_s").iloc[0]["variant"]


def test_a_second_run_re_timing_one_configuration_decides_by_its_own_round(tmp_path):
    path = tmp_path / "store.h5"
    write_run(path, FIRSTS + OLD_ROUND)
    newer = write_run(path, NEW_ROUND)
    with Store.open(path, "r") as store:
        assert chosen(store.frame("measurements")) == "A"
        again = stored_rows(store, retimed=True)
    round_ = latest_round({row["id"]: row for row in again.values()})
    assert {row["run_id"] for row in round_.values()} == {newer}
    assert round_["A"]["median_s"] < round_["B"]["median_s"]


def test_a_merge_keeps_time_order_and_rounds_whole_whatever_the_order_of_its_inputs(tmp_path):
    old, new = tmp_path / "old.h5", tmp_path / "new.h5"
    write_run(old, FIRSTS + OLD_ROUND)
    time.sleep(0.01)
    newer = write_run(new, NEW_ROUND)
    for order in ([old, new], [new, old]):
        out = tmp_path / f"merged-{order[0].stem}.h5"
        summary = merge_stores(order, out)
        # re-timings of the same code in two runs are two rounds, not rows to choose between
        assert summary.tables["measurements"].superseded == 0
        with Store.open(out, "r") as store:
            frame = store.frame("measurements")
        assert frame["row_id"].tolist()[-2:] == ["0001", "0002"]
        assert set(frame["run_id"].tolist()[-2:]) == {newer}
        assert chosen(frame) == "A"
