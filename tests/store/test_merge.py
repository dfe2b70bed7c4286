"""Merging stores: every run once, identical rows once, per measurement key the narrowest ci wins; inputs are never touched and refused cases write nothing."""

from __future__ import annotations

import hashlib

import h5py
import numpy as np
import pytest

from store_support import measurement
from hybridtune.store import (TABLES, Store, StoreError, StoreLockedError, StoreVersionError,
                              TableCounts, merge_stores)

KERNEL = dict(code_hash="c1", name="LC/LC_ijl/radauIIA7/Cusp/part0", template="LC",
              variant="LC_ijl", ivp="Cusp", method="radauIIA7", code="y[j] = a * x[j];")


def prediction(key: str, threads: int) -> dict:
    return dict(key=key, code_hash="c1", machine_sha256="ab" * 32, region="L2", threads=threads,
                model="ECM", kerncraft_version="0.8.18", osaca_version="0.7.1", n_sample=4000,
                status="ok", message="", cycles_per_cl=12.5 * threads, iterations_per_cl=8.0,
                contributions={"T_OL": 4.0, "T_nOL": 2.0}, saturation_cores=4)


VARIANT = dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, threads=2, ranks=1,
               variant="F_RHS_LC_jli", predicted_s=1.25e-3, t_com_s=float("nan"), rank=1,
               model="ECM", breakdown={"kernels": [["LC", "LC_ijl", 4, 1e-3]], "message": ""},
               features={})
PREDICTION_SET = dict(digest="d" * 64, scenario="default", method="radauIIA7", ivp="Cusp",
                      n=10**6, threads=2, ranks=1, model="ECM", machine_sha256="ab" * 32, variants=1)
FIT = dict(kind="omp_barrier", form="a + b*log2(p)", a=1e-7, b=2e-7, cv_error=0.04,
           validated=True, data={"threads": [1, 2]}, ranks=1, provenance={})


FAILED = dict(status="crash", median_s=None, ci_low_s=None, ci_high_s=None, ci_rel=None,
              message="killed by signal SIGSEGV", code_sha256="e" * 64)
NO_PROVENANCE = dict(id="A_old", code_sha256="", generator_version="", build_id="", compiler="",
                     compiler_flags="", hardware_id="", hardware={}, ci_target=None, budget_s=None, timing="")

A_MEASUREMENTS = [
    measurement("a1", ci_rel=0.05),                       # superseded by b1
    measurement("a2", **FAILED),                          # kept; b2 repeats it
    measurement("a3", **NO_PROVENANCE, ci_rel=0.04),      # superseded by b5
]
B_MEASUREMENTS = [
    measurement("b1", ci_rel=0.02, node="n7"),            # same key as a1, narrower: wins
    measurement("b2", **FAILED),                          # same key and status as a2: dropped
    measurement("b3", **{**FAILED, "status": "timeout"}), # another status: kept
    measurement("b4", ci_rel=0.1, hardware_id="g" * 16),  # other hardware: another key, kept
    measurement("b5", **NO_PROVENANCE, ci_rel=0.01),      # keyed by id..node: beats a3
    measurement("b6", **NO_PROVENANCE, node="n2"),        # other node: kept
]


def write_store(path, command: str, rows: dict) -> str:
    with Store.open(path, "a", run={"command": command}) as store:
        for table, records in rows.items():
            store.append_many(table, records)
        return store.run_id


def fingerprint(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def two_jobs(tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    run_a = write_store(a, "tune job a", {
        "kernels": [KERNEL], "kernel_predictions": [prediction("k1", 1), prediction("k2", 2)],
        "variant_predictions": [VARIANT], "prediction_sets": [PREDICTION_SET],
        "measurements": A_MEASUREMENTS, "comm_fits": [FIT]})
    run_b = write_store(b, "tune job b", {
        "kernels": [KERNEL],
        "kernel_predictions": [prediction("k1", 1), prediction("k2", 2), prediction("k3", 3)],
        "variant_predictions": [VARIANT], "prediction_sets": [{**PREDICTION_SET, "variants": 1}],
        "measurements": B_MEASUREMENTS, "comm_fits": [{**FIT, "cv_error": 0.05}]})
    return a, b, run_a, run_b


def test_two_jobs_merge_into_every_run_once_and_the_best_measurement_per_key(tmp_path, two_jobs):
    a, b, run_a, run_b = two_jobs
    before = fingerprint(tmp_path)
    out = tmp_path / "merged.h5"

    summary = merge_stores([a, b], out)

    assert fingerprint(tmp_path) == {**before, "merged.h5": fingerprint(tmp_path)["merged.h5"]}
    assert summary.sources == (str(a), str(b)) and summary.target == str(out)
    assert summary.store_id not in summary.source_store_ids and summary.journal_records == 0
    assert summary.tables == {
        "runs": TableCounts(2, 2, 0, 0),
        "kernels": TableCounts(2, 1, 1, 0),
        "kernel_predictions": TableCounts(5, 3, 2, 0),
        "variant_predictions": TableCounts(2, 1, 1, 0),   # NaN t_com_s equal to NaN
        "prediction_sets": TableCounts(2, 1, 1, 0),
        "measurements": TableCounts(9, 6, 1, 2),
        "comm_benchmarks": TableCounts(0, 0, 0, 0),
        "comm_fits": TableCounts(2, 2, 0, 0),             # cv_error differs: not the same row
        "models": TableCounts(0, 0, 0, 0),
    }
    with Store.open(out, "r") as store:
        frames = {name: store.frame(name) for name in TABLES}
    measured = frames["measurements"]
    assert measured.row_id.tolist() == ["a2", "b1", "b3", "b4", "b5", "b6"]
    winner = measured[measured.row_id == "b1"].iloc[0]
    assert winner.ci_rel == 0.02 and winner.run_id == run_b and winner.node == "n7"
    assert measured[measured.row_id == "a2"].iloc[0].run_id == run_a
    assert frames["kernel_predictions"].key.tolist() == ["k1", "k2", "k3"]
    assert frames["kernel_predictions"].run_id.tolist() == [run_a, run_a, run_b]
    assert frames["prediction_sets"].run_id.tolist() == [run_a]
    runs = frames["runs"]
    assert runs.run_id.tolist() == [run_a, run_b, summary.run_id]
    assert runs.command.tolist() == ["tune job a", "tune job b", "store merge"]
    assert runs.argv.iloc[2] == ["store", "merge", str(a), str(b), "-o", str(out)]
    assert runs.extra.iloc[2] == {"merged_from": [
        {"path": str(a.resolve()), "store_id": summary.source_store_ids[0]},
        {"path": str(b.resolve()), "store_id": summary.source_store_ids[1]}]}
    with h5py.File(out, "r") as handle:
        assert handle.attrs["store_id"] == summary.store_id


def test_merging_a_merged_store_with_one_of_its_inputs_adds_nothing(tmp_path, two_jobs):
    a, b, _, _ = two_jobs
    first = merge_stores([a, b], tmp_path / "ab.h5")
    again = merge_stores([tmp_path / "ab.h5", b], tmp_path / "abb.h5")
    for name, counts in again.tables.items():
        extra_run = 1 if name == "runs" else 0
        assert counts.rows_out == first.tables[name].rows_out + extra_run, name
    assert again.tables["measurements"].superseded == 0


def test_a_killed_writers_journal_is_merged_and_a_live_writer_is_refused(tmp_path, two_jobs):
    a, _, _, _ = two_jobs
    c = tmp_path / "c.h5"
    write_store(c, "tune job c", {"kernels": [KERNEL]})
    journal = c.with_name("c.h5.journal")
    file_before = c.read_bytes()
    with Store.open(c, "a", run={"command": "measure job c"}) as writer:
        writer.append_many("measurements", [measurement("c1", ci_rel=0.001)])
        before = fingerprint(tmp_path)
        with pytest.raises(StoreLockedError, match="open for writing by another process"):
            merge_stores([a, c], tmp_path / "merged.h5")
        assert fingerprint(tmp_path) == before
        left = journal.read_bytes()
    c.write_bytes(file_before)  # the state of a writer killed before closing
    journal.write_bytes(left)
    before = fingerprint(tmp_path)

    summary = merge_stores([a, c], tmp_path / "merged.h5")

    assert summary.journal_records == 2  # the run record and the measurement
    assert {k: v for k, v in fingerprint(tmp_path).items() if k != "merged.h5"} == before
    with Store.open(tmp_path / "merged.h5", "r") as store:
        measured = store.frame("measurements")
        assert store.frame("runs").command.tolist() == ["tune job a", "tune job c",
                                                        "measure job c", "store merge"]
    assert "c1" in measured.row_id.tolist() and "a1" not in measured.row_id.tolist()


def test_merge_refuses_a_store_of_another_version_and_an_existing_target(tmp_path, two_jobs):
    a, b, _, _ = two_jobs
    old = tmp_path / "old.h5"
    write_store(old, "tune", {"kernels": [KERNEL]})
    with h5py.File(old, "r+") as handle:  # the version is all that is looked at before refusing
        handle.attrs["schema_version"] = np.int64(2)
    before = fingerprint(tmp_path)
    with pytest.raises(StoreVersionError) as info:
        merge_stores([a, old], tmp_path / "merged.h5")
    assert f"hybridtune store upgrade {old} -o NEW" in str(info.value)
    with pytest.raises(StoreError, match="b.h5 exists"):
        merge_stores([a], b)
    with pytest.raises(StoreError, match="no stores to merge"):
        merge_stores([], tmp_path / "merged.h5")
    with pytest.raises(StoreError, match="no such store"):
        merge_stores([a, tmp_path / "gone.h5"], tmp_path / "merged.h5")
    assert fingerprint(tmp_path) == before


def test_passes_keep_each_runs_timing_of_the_same_code(tmp_path, two_jobs):
    a, b, run_a, run_b = two_jobs
    out = tmp_path / "passes.h5"

    summary = merge_stores([a, b], out, passes=True)

    # a1/b1 and a3/b5 are the same code timed in two runs: both kept, nothing superseded; a
    # failure repeated in the other pass (b2) is that pass's verdict, kept too
    assert summary.tables["measurements"] == TableCounts(9, 9, 0, 0)
    with Store.open(out, "r") as store:
        measured = store.frame("measurements")
        runs = store.frame("runs")
    assert sorted(measured.row_id) == ["a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5", "b6"]
    assert measured.set_index("row_id").run_id[["a1", "b1"]].tolist() == [run_a, run_b]
    assert runs.argv.iloc[-1][-1] == "--passes"
