"""Upgrading a store: a schema-2 file becomes a new file of the current schema row for row; the old file is never touched and refused cases write nothing."""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os

import h5py  # only to fake files of old schema versions, which no code of this version writes
import numpy as np
import pytest

from hybridtune.store import (SCHEMA_VERSION, TABLES, Store, StoreError, StoreFormatError,
                              StoreLockedError, StoreVersionError, upgrade_store)
from hybridtune.store import hdf5

# Schema version 2 as hybridtune/store/schema.py declared it (version 1: the same without
# prediction_sets).
V2_TABLES = {
    "runs": dict(run_id="str", command="str", argv="json", host="str", machine_file="str",
                 machine_sha256="str", compiler="str", compiler_flags="str",
                 hybridtune_version="str", kerncraft_version="str", osaca_version="str",
                 started_at="str", extra="json"),
    "kernels": dict(code_hash="str", name="str", template="str", variant="str", ivp="str",
                    method="str", code="str", run_id="str"),
    "kernel_predictions": dict(key="str", code_hash="str", machine_sha256="str", region="str",
                               cores="int", model="str", kerncraft_version="str",
                               osaca_version="str", n_sample="int", status="str", message="str",
                               cycles_per_cl="float", iterations_per_cl="float",
                               contributions="json", saturation_cores="int", run_id="str"),
    "variant_predictions": dict(scenario="str", method="str", ivp="str", n="int", cores="int",
                                variant="str", predicted_s="float", t_com_s="float", rank="int",
                                model="str", breakdown="json", run_id="str"),
    "prediction_sets": dict(digest="str", scenario="str", method="str", ivp="str", n="int",
                            cores="int", model="str", machine_sha256="str", variants="int",
                            run_id="str"),
    "measurements": dict(id="str", method="str", ivp="str", n="int", threads="int", status="str",
                         median_s="float", ci_low_s="float", ci_high_s="float", ci_rel="float",
                         repetitions="int", steps_per_repetition="int", check_error="float",
                         message="str", node="str", source="str", run_id="str"),
    "comm_benchmarks": dict(kind="str", threads="int", median_s="float", samples="json",
                            run_id="str"),
    "comm_fits": dict(kind="str", form="str", a="float", b="float", cv_error="float",
                      validated="bool", data="json", run_id="str"),
}
V1_TABLES = {name: columns for name, columns in V2_TABLES.items() if name != "prediction_sets"}

OLD_ROWS = {
    "runs": [dict(run_id="run1", command="tune", argv=["tune", "s.yaml"], host="h1",
                  machine_file="zen3.yml", machine_sha256="ab" * 32, compiler="gcc",
                  compiler_flags="-O3", hybridtune_version="0.3.0", kerncraft_version="0.8.18",
                  osaca_version="0.7.1", started_at="2026-11-30T10:00:00+00:00", extra={})],
    "kernels": [dict(code_hash="c1", name="LC/LC_ijl/radauIIA7/Cusp/part0", template="LC",
                     variant="LC_ijl", ivp="Cusp", method="radauIIA7", code="y[j] = a * x[j];",
                     run_id="run1")],
    "kernel_predictions": [
        dict(key="k1", code_hash="c1", machine_sha256="ab" * 32, region="L2", cores=1, model="ECM",
             kerncraft_version="0.8.18", osaca_version="0.7.1", n_sample=4000, status="ok",
             message="", cycles_per_cl=12.5, iterations_per_cl=8.0, contributions={"T_OL": 4.0},
             saturation_cores=4, run_id="run1"),
        dict(key="k2", code_hash="c1", machine_sha256="ab" * 32, region="L2", cores=2, model="ECM",
             kerncraft_version="0.8.18", osaca_version="0.7.1", n_sample=4000, status="failed",
             message="no loop", cycles_per_cl=None, iterations_per_cl=None, contributions={},
             saturation_cores=0, run_id="run1")],
    "variant_predictions": [
        dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, cores=20,
             variant="F_RHS_LC_jli", predicted_s=1.25e-3, t_com_s=2e-5, rank=1, model="ECM",
             breakdown={"kernels": [["LC", "LC_ijl", 4, 1e-3]], "message": ""}, run_id="run1")],
    "prediction_sets": [
        dict(digest="d" * 64, scenario="default", method="radauIIA7", ivp="Cusp", n=10**6,
             cores=20, model="ECM", machine_sha256="ab" * 32, variants=1, run_id="run1")],
    "measurements": [
        dict(id="A_x", method="radauIIA7", ivp="Cusp", n=300, threads=2, status="ok",
             median_s=1.5e-4, ci_low_s=1.4e-4, ci_high_s=1.6e-4, ci_rel=0.05, repetitions=12,
             steps_per_repetition=40, check_error=3e-13, message="", node="n1", source="v.c",
             run_id="run1"),
        dict(id="A_y", method="radauIIA7", ivp="Cusp", n=300, threads=2, status="crash",
             median_s=None, ci_low_s=None, ci_high_s=None, ci_rel=None, repetitions=0,
             steps_per_repetition=0, check_error=None, message="SIGSEGV — Ünïcode", node="n2",
             source="", run_id="run1")],
    "comm_benchmarks": [dict(kind="omp_barrier", threads=2, median_s=3.2e-7,
                             samples=[3.1e-7, 3.2e-7], run_id="run1")],
    "comm_fits": [dict(kind="omp_barrier", form="a + b*log2(p)", a=1e-7, b=2e-7, cv_error=0.04,
                       validated=True, data={"threads": [1, 2]}, run_id="run1")],
}
# what a writer killed before closing left in the journal: one more measurement
JOURNAL_ROW = dict(id="A_z", method="radauIIA7", ivp="Cusp", n=600, threads=1, status="ok",
                   median_s=3e-4, ci_low_s=2.9e-4, ci_high_s=3.1e-4, ci_rel=0.03, repetitions=8,
                   steps_per_repetition=20, check_error=0.0, message="", node="n1", source="w.c",
                   run_id="run1")
OLD_ID = "0" * 32
DTYPES = {"str": h5py.string_dtype("utf-8"), "json": h5py.string_dtype("utf-8"), "int": np.int64,
          "float": np.float64, "bool": bool}


def _stored(kind, value):
    if kind == "json":
        return json.dumps(value, separators=(",", ":"))
    if kind == "float" and value is None:
        return math.nan
    return value


def write_old_store(path, rows, version=2, tables=V2_TABLES, store_id=OLD_ID, last_sequence=0):
    """A store file as hybridtune with schema `version` wrote it (the h5py layout of
    store/hdf5.py: root attributes, /tables/<table>/<column> with attrs["kind"]): old code cannot
    run here, so the file is faked."""
    with h5py.File(path, "w") as handle:
        handle.attrs["format"] = "hybridtune-store"
        handle.attrs["schema_version"] = np.int64(version)
        handle.attrs["store_id"] = store_id
        handle.attrs["last_sequence"] = np.int64(last_sequence)
        handle.attrs["schema"] = json.dumps(tables)
        for table, columns in tables.items():
            group = handle.create_group(f"tables/{table}")
            for name, kind in columns.items():
                values = [_stored(kind, row[name]) for row in rows.get(table, [])]
                data = np.array(values, dtype=object if kind in ("str", "json") else DTYPES[kind])
                column = group.create_dataset(name, data=data, maxshape=(None,), chunks=(1024,),
                                              dtype=DTYPES[kind])
                column.attrs["kind"] = kind
    return path


def write_old_journal(store_path, records, version=2, tables=V2_TABLES, store_id=OLD_ID):
    """The journal a killed writer of that version left: header, then (seq, table, rows) records."""
    lines = [json.dumps({"format": "hybridtune-journal", "store_id": store_id,
                         "schema_version": version})]
    for seq, table, rows in records:
        columns = {name: [_stored(kind, row[name]) for row in rows]
                   for name, kind in tables[table].items()}
        lines.append(json.dumps({"seq": seq, "table": table, "columns": columns}))
    journal = store_path.with_name(store_path.name + ".journal")
    journal.write_text("\n".join(lines) + "\n")
    return journal


def fingerprint(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _same(value, expected) -> bool:
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        return isinstance(value, float) and math.isnan(value)
    return value == expected


def test_a_schema_2_store_is_upgraded_row_for_row_and_left_unchanged(tmp_path):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)
    write_old_journal(old, [(1, "measurements", [JOURNAL_ROW])])
    before = fingerprint(tmp_path)
    new = tmp_path / "new.h5"

    summary = upgrade_store(old, new, run={"argv": ["store", "upgrade", "old.h5", "-o", "new.h5"]})

    assert fingerprint(tmp_path) == {**before, "new.h5": fingerprint(tmp_path)["new.h5"]}
    assert (summary.source, summary.target) == (str(old), str(new))
    assert (summary.from_version, summary.to_version) == (2, SCHEMA_VERSION)
    assert summary.source_store_id == OLD_ID and summary.store_id != OLD_ID
    assert summary.journal_records == 1
    assert summary.rows == {name: len(OLD_ROWS.get(name, [])) for name in TABLES} | {
        "measurements": 3}
    with h5py.File(new, "r") as handle:
        assert handle.attrs["store_id"] == summary.store_id
        assert handle.attrs["schema_version"] == SCHEMA_VERSION
    with Store.open(new, "r") as store:
        frames = {name: store.frame(name) for name in TABLES}
    for name, frame in frames.items():
        assert list(frame.columns) == list(TABLES[name].names)
        assert "cores" not in frame.columns
    for name in ("kernel_predictions", "variant_predictions", "prediction_sets"):
        assert frames[name].threads.tolist() == [row["cores"] for row in OLD_ROWS[name]]
        for row, old_row in zip(frames[name].to_dict("records"), OLD_ROWS[name]):
            for column, value in old_row.items():
                assert _same(row["threads" if column == "cores" else column], value), (name, column)
    for name in ("kernels", "comm_benchmarks", "comm_fits"):
        for row, old_row in zip(frames[name].to_dict("records"), OLD_ROWS[name]):
            assert all(_same(row[column], value) for column, value in old_row.items()), name

    assert frames["variant_predictions"].features.tolist() == [{}]   # predicting again fills them
    assert frames["models"].empty
    for name in ("measurements", "variant_predictions", "prediction_sets", "comm_benchmarks",
                 "comm_fits"):   # schema 5: every row so far ran on one rank
        assert set(frames[name].ranks) == {1}, name
    assert set(frames["measurements"].nodes) == {1}
    assert frames["comm_benchmarks"].bytes.tolist() == [0] * len(OLD_ROWS["comm_benchmarks"])
    assert frames["comm_fits"].provenance.tolist() == [{}] * len(OLD_ROWS["comm_fits"])

    measured = frames["measurements"].to_dict("records")
    assert [row["id"] for row in measured] == ["A_x", "A_y", "A_z"]
    for row, old_row in zip(measured, OLD_ROWS["measurements"] + [JOURNAL_ROW]):
        assert all(_same(row[column], value) for column, value in old_row.items())
        for column in ("code_sha256", "generator_version", "build_id", "compiler",
                       "compiler_flags", "hardware_id"):
            assert row[column] == ""  # matches no resume key: measured again, never reused
        assert row["hardware"] == {}
        assert math.isnan(row["ci_target"]) and math.isnan(row["budget_s"])
    row_ids = [row["row_id"] for row in measured]
    assert len(set(row_ids)) == 3 and all(len(r) == 32 and int(r, 16) >= 0 for r in row_ids)

    runs = frames["runs"].to_dict("records")
    assert [run["run_id"] for run in runs] == ["run1", summary.run_id]
    assert runs[0]["argv"] == ["tune", "s.yaml"] and runs[0]["hybridtune_version"] == "0.3.0"
    upgrade = runs[1]
    assert upgrade["command"] == "store upgrade"
    assert upgrade["argv"] == ["store", "upgrade", "old.h5", "-o", "new.h5"]
    assert upgrade["extra"] == {"upgraded_from": {"path": str(old.resolve()), "store_id": OLD_ID,
                                                  "schema_version": 2}}

    with Store.open(new, "a", run={"command": "predict"}) as writer:  # a store to go on with
        writer.append_many("kernel_predictions", [
            {("threads" if k == "cores" else k): v for k, v in row.items() if k != "run_id"}
            for row in OLD_ROWS["kernel_predictions"]])
    with Store.open(new, "r") as store:
        assert store.frame("kernel_predictions").threads.tolist() == [1, 2, 1, 2]


def test_a_schema_1_store_steps_through_2_to_the_current_version(tmp_path):
    rows = {name: value for name, value in OLD_ROWS.items() if name != "prediction_sets"}
    old = write_old_store(tmp_path / "v1.h5", rows, version=1, tables=V1_TABLES)
    summary = upgrade_store(old, tmp_path / "v3.h5")
    assert summary.from_version == 1 and summary.rows["prediction_sets"] == 0
    with Store.open(tmp_path / "v3.h5", "r") as store:
        assert store.rows("prediction_sets") == 0
        assert store.frame("kernel_predictions").threads.tolist() == [1, 2]
        assert store.frame("measurements").id.tolist() == ["A_x", "A_y"]


def test_opening_an_old_store_names_the_upgrade_command(tmp_path):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)
    before = fingerprint(tmp_path)
    for mode in ("r", "a"):
        with pytest.raises(StoreVersionError) as info:
            Store.open(old, mode)
        assert f"hybridtune store upgrade {old} -o NEW" in str(info.value)
        assert "schema_version 2" in str(info.value)
    assert fingerprint(tmp_path) == before


def _refused(tmp_path, call, error_type, *fragments):
    before = fingerprint(tmp_path)
    with pytest.raises(error_type) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert fingerprint(tmp_path) == before
    return info.value


def test_upgrading_twice_is_refused(tmp_path):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)
    upgrade_store(old, tmp_path / "new.h5")
    _refused(tmp_path, lambda: upgrade_store(tmp_path / "new.h5", tmp_path / "newer.h5"),
             StoreError, str(tmp_path / "new.h5"), f"already at schema version {SCHEMA_VERSION}")


def test_a_missing_store_an_existing_target_and_a_foreign_file_are_refused(tmp_path):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)
    _refused(tmp_path, lambda: upgrade_store(tmp_path / "gone.h5", tmp_path / "new.h5"),
             StoreError, "gone.h5", "no such store")
    (tmp_path / "taken.h5").write_bytes(b"someone's file")
    _refused(tmp_path, lambda: upgrade_store(old, tmp_path / "taken.h5"), StoreError,
             "taken.h5 exists")
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as handle:
        handle["temperature"] = np.arange(4.0)
    _refused(tmp_path, lambda: upgrade_store(foreign, tmp_path / "new.h5"), StoreFormatError,
             "not a hybridtune store")
    (tmp_path / "noise.h5").write_bytes(np.random.default_rng(0).bytes(4096))
    _refused(tmp_path, lambda: upgrade_store(tmp_path / "noise.h5", tmp_path / "new.h5"),
             StoreFormatError, "not a readable HDF5 file")
    _refused(tmp_path, lambda: upgrade_store(old, tmp_path / "no" / "new.h5"), StoreError,
             "does not exist")


def test_a_store_being_written_is_refused(tmp_path):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)
    journal = write_old_journal(old, [])
    fd = os.open(journal, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a live writer holds
        _refused(tmp_path, lambda: upgrade_store(old, tmp_path / "new.h5"), StoreLockedError,
                 "open for writing by another process")
    finally:
        os.close(fd)
    upgrade_store(old, tmp_path / "new.h5")  # the writer gone, its empty journal is no obstacle


def test_an_interrupted_upgrade_leaves_nothing_behind(tmp_path, monkeypatch):
    old = write_old_store(tmp_path / "old.h5", OLD_ROWS)

    def interrupted(scratch, path):
        assert scratch.exists() and scratch.parent == path.parent  # written beside the target
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(hdf5, "_link_new", interrupted)
    _refused(tmp_path, lambda: upgrade_store(old, tmp_path / "new.h5"), StoreError,
             "No space left", "nothing was written")


def test_a_newer_store_is_refused_without_an_upgrade_hint(tmp_path):
    newer = write_old_store(tmp_path / "newer.h5", {}, version=SCHEMA_VERSION + 1)
    error = _refused(tmp_path, lambda: upgrade_store(newer, tmp_path / "new.h5"),
                     StoreVersionError, f"schema_version {SCHEMA_VERSION + 1}")
    assert "store upgrade" not in str(error)
