"""The store: every table round-trips through DataFrames, bad records are refused with what was expected, damaged or foreign files are refused untouched."""

from __future__ import annotations

import hashlib
import math
import os

import h5py  # only to make foreign and damaged files; the package reads HDF5 in store/hdf5.py
import numpy as np
import pytest
from pandas.api.types import is_string_dtype

from hybridtune.store import (FORMAT, SCHEMA_VERSION, TABLES, Store, StoreError, StoreFormatError,
                              StoreSchemaError, StoreVersionError)

RUN = {"command": "tune", "argv": ["tune", "scenarios/default.yaml"], "machine_file": "zen3.yml",
       "machine_sha256": "ab" * 32, "compiler": "gcc", "compiler_flags": "-O3 -march=native"}

SAMPLES = {
    "kernels": [
        dict(code_hash="c1", name="LC/LC_ijl/radauIIA7/Cusp/part0", template="LC", variant="LC_ijl",
             ivp="Cusp", method="radauIIA7", code="for (j = 0; j < n; j++)\n  y[j] = a * x[j];\n"),
        dict(code_hash="c2", name="Update/Update_j/radauIIA7", template="Update", variant="Update_j",
             ivp="", method="radauIIA7", code="double y[n];"),
    ],
    "kernel_predictions": [
        dict(key="k1", code_hash="c1", machine_sha256="ab" * 32, region="L2", threads=1, model="ECM",
             kerncraft_version="0.8.18", osaca_version="0.7.1", n_sample=4000, status="ok",
             message="", cycles_per_cl=12.5, iterations_per_cl=8.0,
             contributions={"T_OL": 4.0, "T_nOL": 2.0, "L1L2": [3, 4.5]}, saturation_cores=4),
        dict(key="k2", code_hash="c2", machine_sha256="ab" * 32, region="MEM", threads=2, model="ECM",
             kerncraft_version="0.8.18", osaca_version="0.7.1", n_sample=10**7, status="failed",
             message="pointer_increment could not be detected automatically",
             cycles_per_cl=None, iterations_per_cl=None, contributions={}, saturation_cores=0),
    ],
    "variant_predictions": [
        dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, threads=20, ranks=1,
             variant="F_RHS_LC_jli", predicted_s=1.25e-3, t_com_s=2e-5, rank=1, model="ECM",
             breakdown={"kernels": {"LC": 1e-3}, "com": 2e-5}, features={}),
    ],
    "prediction_sets": [
        dict(digest="d" * 64, scenario="default", method="radauIIA7", ivp="Cusp", n=10**6,
             threads=20, ranks=1, model="ECM", machine_sha256="ab" * 32, variants=1),
    ],
    "measurements": [
        dict(row_id="1" * 32, id="A_x", method="radauIIA7", ivp="Cusp", n=300, threads=2, ranks=1,
             nodes=1, status="ok", median_s=1.5e-4, ci_low_s=1.4e-4, ci_high_s=1.6e-4,
             ci_rel=0.05, ci_target=0.02, budget_s=5.0, timing="alone", repetitions=12, steps_per_repetition=40,
             check_error=3e-13, message="", code_sha256="c" * 64, generator_version="0.4.0",
             source="/tmp/variant.c", build_id="b" * 16, compiler="gcc 13.2.0",
             compiler_flags="-O3 -march=native", hardware_id="h" * 16,
             hardware={"model": "AMD EPYC 7763", "flags_sha256": "f" * 16,
                       "caches": {"L1d": 32768, "L2": 524288}}, node="n1"),
        dict(row_id="2" * 32, id="A_y", method="radauIIA7", ivp="Cusp", n=300, threads=1,
             ranks=2, nodes=2, status="crash", median_s=None, ci_low_s=None, ci_high_s=None,
             ci_rel=None, ci_target=0.02, budget_s=None, timing="alone", repetitions=0, steps_per_repetition=0,
             check_error=None, message="SIGSEGV in ht_step — Ünïcode ✓", code_sha256="c" * 64,
             generator_version="0.4.0", source="", build_id="b" * 16, compiler="gcc 13.2.0",
             compiler_flags="-O3 -march=native", hardware_id="h" * 16, hardware={}, node="n2"),
    ],
    "comm_benchmarks": [
        dict(kind="omp_barrier", threads=2, ranks=1, bytes=0, median_s=3.2e-7,
             samples=[3.1e-7, 3.2e-7, 3.4e-7], provenance={}),
        dict(kind="mpi_allgather", threads=1, ranks=2, bytes=4096, median_s=2.5e-6,
             samples=[2.4e-6, 2.5e-6], provenance={"library": "MPICH 5.0.2", "ranks_per_node": 2,
                                                   "nodes": ["n1"]}),
    ],
    "comm_fits": [
        dict(kind="omp_barrier", form="a + b*log2(p)", a=1e-7, b=2e-7, cv_error=0.04,
             validated=True, data={"threads": [1, 2], "median_s": [1e-7, 3.2e-7]}, ranks=1,
             provenance={}),
        dict(kind="mpi_allgather", form="a + b*p", a=2e-6, b=1e-6, cv_error=float("nan"),
             validated=False, data=[], ranks=2, provenance={"library": "MPICH 5.0.2"}),
    ],
}


def _same(value, expected) -> bool:
    if expected is None:  # None given for a float column comes back as NaN
        return isinstance(value, float) and math.isnan(value)
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(value)
    return value == expected


def assert_frame_holds(frame, table: str, records: list[dict], run_id: str) -> None:
    assert list(frame.columns) == list(TABLES[table].names)
    assert len(frame) == len(records)
    for row, expected in zip(frame.to_dict("records"), records):
        for column, value in {"run_id": run_id, **expected}.items():
            assert _same(row[column], value), (table, column, row[column], value)


def fingerprint(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_every_table_round_trips_through_writer_reader_and_reopening(tmp_path):
    path = tmp_path / "tune.h5"
    with Store.open(path, "a", run=RUN) as store:
        run_id = store.run_id
        for table, records in SAMPLES.items():
            store.append_many(table, records[:1])
            for record in records[1:]:
                store.append(table, **record)
        for table, records in SAMPLES.items():  # the writer sees its own records before closing
            assert_frame_holds(store.frame(table), table, records, run_id)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tune.h5"]  # journal folded in, removed
    with Store.open(path, "r") as reader:
        for table, records in SAMPLES.items():
            assert_frame_holds(reader.frame(table), table, records, run_id)
        runs = reader.frame("runs")
    assert runs.run_id.tolist() == [run_id] and runs.command[0] == "tune"
    assert runs.argv[0] == RUN["argv"] and runs.machine_sha256[0] == "ab" * 32
    assert runs.started_at[0].endswith("+00:00") and runs.kerncraft_version[0] == "0.8.18"
    with Store.open(path, "a", run={"command": "measure"}) as again:
        again.append_many("measurements", SAMPLES["measurements"])
        second = again.run_id
    with Store.open(path, "r") as reader:
        measured = reader.frame("measurements")
        assert reader.frame("runs").command.tolist() == ["tune", "measure"]
    assert measured.id.tolist() == ["A_x", "A_y", "A_x", "A_y"]
    assert measured.run_id.tolist() == [run_id, run_id, second, second]


def test_a_frame_of_some_columns_holds_them_in_table_order_from_file_and_journal(tmp_path):
    path = tmp_path / "tune.h5"
    with Store.open(path, "a", run=RUN) as store:
        store.append_many("measurements", SAMPLES["measurements"][:1])
    with Store.open(path, "a", run={"command": "measure"}) as store:
        store.append_many("measurements", SAMPLES["measurements"][1:])   # still in the journal
        some = store.frame("measurements", ("median_s", "id", "hardware"))
        assert list(some.columns) == ["id", "median_s", "hardware"]
        assert some.id.tolist() == ["A_x", "A_y"] and some.hardware[1] == {}
        assert some.median_s[0] == 1.5e-4 and math.isnan(some.median_s[1])
        whole = store.frame("measurements")     # then every column, the read ones kept
        assert list(whole.columns) == list(TABLES["measurements"].names) and len(whole) == 2
        with pytest.raises(StoreError, match="table measurements has no column 'seconds'"):
            store.frame("measurements", ("id", "seconds"))


def test_a_frame_of_the_rows_containing_a_text_decodes_only_those(tmp_path):
    path = tmp_path / "tune.h5"
    first, second = (dict(SAMPLES["variant_predictions"][0], variant=v, features={"m": m})
                     for v, m in (("A_x", "ab" * 32), ("A_y", "cd" * 32)))
    with Store.open(path, "a", run=RUN) as store:
        store.append_many("variant_predictions", [first, second, dict(first, variant="A_z")])
    with h5py.File(path, "r+") as handle:   # damage the one row the filter leaves out
        handle["tables/variant_predictions/features"][1] = "{not json " + "cd" * 32
    with Store.open(path, "a", run={"command": "predict"}) as store:
        store.append("variant_predictions", **dict(second, variant="B_y"))    # in the journal
        store.append("variant_predictions", **dict(first, variant="B_x"))
        mine = store.frame("variant_predictions", ("variant", "n"),
                           containing=("features", "ab" * 32))
        assert list(mine.columns) == ["n", "variant"]
        assert mine.variant.tolist() == ["A_x", "A_z", "B_x"] and mine.n.dtype == np.int64
        later = store.frame("variant_predictions", ("variant", "features"),
                            containing=("variant", "B_"))
        assert later.variant.tolist() == ["B_y", "B_x"] and later.features[0] == {"m": "cd" * 32}
        none = store.frame("variant_predictions", containing=("features", "ef" * 32))
        assert len(none) == 0 and list(none.columns) == list(TABLES["variant_predictions"].names)
        with pytest.raises(StoreFormatError, match="column features holds text that is not"):
            store.frame("variant_predictions")
        with pytest.raises(StoreError, match="column n holds int values, not text"):
            store.frame("variant_predictions", containing=("n", "1"))
        with pytest.raises(StoreError, match="has no column 'machine'"):
            store.frame("variant_predictions", containing=("machine", "ab"))


def test_frames_have_one_dtype_per_kind_also_when_empty(tmp_path):
    with Store.open(tmp_path / "s.h5") as store:
        empty = store.frame("comm_fits")
        store.append_many("comm_fits", [dict(r, run_id="r") for r in SAMPLES["comm_fits"]])
        full = store.frame("comm_fits")
    for frame in (empty, full):
        assert frame.a.dtype == np.float64 and frame.validated.dtype == bool
        assert frame.data.dtype == object and is_string_dtype(frame.kind)
    assert len(empty) == 0 and list(empty.columns) == list(TABLES["comm_fits"].names)
    assert full.validated.tolist() == [True, False] and math.isnan(full.cv_error[1])
    with Store.open(tmp_path / "s.h5", "r") as reader:
        measurements = reader.frame("measurements")
    assert measurements.n.dtype == np.int64 and len(measurements) == 0


def test_numpy_values_and_json_text_are_accepted_as_plain_values(tmp_path):
    with Store.open(tmp_path / "s.h5", run=RUN) as store:
        store.append("comm_benchmarks", kind="omp_barrier", threads=np.int32(2),
                     ranks=np.int64(1), bytes=0, median_s=np.float32(0.5),
                     samples=np.array([0.25, 0.5]), provenance={})
        store.append("comm_benchmarks", kind="omp_barrier", threads=1, ranks=1, bytes=0,
                     median_s=0.25, samples='{"samples_s": [0.25], "barriers_per_sample": 100}',
                     provenance="{}")
        frame = store.frame("comm_benchmarks")
    assert frame.threads[0] == 2 and frame.median_s[0] == 0.5 and frame.samples[0] == [0.25, 0.5]
    assert frame.samples[1] == {"samples_s": [0.25], "barriers_per_sample": 100}


BAD = [
    ("measurements", "n", "300", "an int"),
    ("measurements", "n", True, "an int"),
    ("measurements", "n", 2**63, "64 bits"),
    ("measurements", "median_s", "fast", "a float"),
    ("measurements", "median_s", False, "a float"),
    ("measurements", "status", 3, "a str"),
    ("measurements", "message", "a\x00b", "without NUL"),
    ("measurements", "message", "\ud800", "UTF-8"),
    ("comm_fits", "validated", 1, "a bool"),
    ("comm_fits", "data", "{'a': 1}", "JSON text"),
    ("comm_fits", "data", '"a JSON string"', "a dict or list"),
    ("comm_fits", "data", {"f": object()}, "JSON values"),
    ("kernel_predictions", "contributions", None, "a dict or list"),
]


@pytest.mark.parametrize("table, column, value, expected", BAD)
def test_a_wrong_type_names_table_column_value_and_expectation(tmp_path, table, column, value,
                                                               expected):
    records = [dict(r) for r in SAMPLES[table]]
    records[-1][column] = value
    with Store.open(tmp_path / "s.h5", run=RUN) as store:
        with pytest.raises(StoreSchemaError) as info:
            store.append_many(table, records)
        assert store.rows(table) == 0  # a batch is kept whole or not at all
    error = info.value
    assert (error.table, error.column, error.row) == (table, column, len(records) - 1)
    assert error.value is value and expected in error.expected
    message = str(error)
    assert repr(table) in message and repr(column) in message and "expected" in message


def test_unknown_table_unknown_column_and_missing_column_are_refused(tmp_path):
    with Store.open(tmp_path / "s.h5", run=RUN) as store:
        with pytest.raises(StoreSchemaError, match="one of the tables runs, kernels"):
            store.append("kernel", code_hash="c")
        with pytest.raises(StoreSchemaError, match="one of the columns") as unknown:
            store.append("comm_benchmarks", kind="x", threads=1, ranks=1, bytes=0,
                         median_s=1.0, samples=[], provenance={}, median=2.0)
        assert unknown.value.column == "median" and unknown.value.value == 2.0
        with pytest.raises(StoreSchemaError, match="missing") as missing:
            store.append("comm_benchmarks", kind="x", threads=1, ranks=1, bytes=0, samples=[],
                         provenance={})
        assert missing.value.column == "median_s"
        with pytest.raises(StoreSchemaError, match="a mapping"):
            store.append_many("comm_benchmarks", [("x", 1, 1.0, [])])
        with pytest.raises(StoreSchemaError, match="one of the tables"):
            store.frame("nope")
        assert store.rows("comm_benchmarks") == 0


def test_run_id_must_be_given_when_the_store_has_no_run(tmp_path):
    record = dict(SAMPLES["comm_benchmarks"][0])
    with Store.open(tmp_path / "s.h5") as store:
        assert store.run_id is None
        with pytest.raises(StoreSchemaError, match="opened without a run") as info:
            store.append("comm_benchmarks", **record)
        assert info.value.column == "run_id"
        store.append("comm_benchmarks", **record, run_id="imported")
        assert store.frame("comm_benchmarks").run_id.tolist() == ["imported"]
        assert store.rows("runs") == 0


def test_a_bad_run_record_is_refused_and_releases_the_store(tmp_path):
    path = tmp_path / "s.h5"
    with pytest.raises(StoreSchemaError) as info:
        Store.open(path, run={"command": "tune", "argv": "tune x"})
    assert (info.value.table, info.value.column) == ("runs", "argv")
    with Store.open(path, run=RUN) as store:  # not left locked
        assert store.rows("runs") == 1


def test_a_reader_sees_an_open_writers_records_and_refresh_shows_new_ones(tmp_path):
    path = tmp_path / "s.h5"
    with Store.open(path, run=RUN) as writer:
        writer.append_many("measurements", SAMPLES["measurements"][:1])
        with Store.open(path, "r") as reader:
            assert reader.frame("measurements").id.tolist() == ["A_x"]
            writer.append_many("measurements", SAMPLES["measurements"][1:])
            assert reader.rows("measurements") == 1  # a snapshot as of open
            reader.refresh()
            assert reader.frame("measurements").id.tolist() == ["A_x", "A_y"]
            with pytest.raises(StoreError, match="mode 'r'"):
                reader.append_many("measurements", SAMPLES["measurements"])


def test_a_second_writer_in_the_same_process_is_refused(tmp_path):
    path = tmp_path / "s.h5"
    with Store.open(path):
        with pytest.raises(StoreError, match="is open for writing by another process") as info:
            Store.open(path, "a")
    assert str(path) in str(info.value)
    with Store.open(path, "a"):
        pass


def test_closed_store_bad_mode_and_missing_store_are_errors(tmp_path):
    store = Store.open(tmp_path / "s.h5")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.frame("runs")
    with pytest.raises(StoreError, match="mode 'w'"):
        Store.open(tmp_path / "s.h5", "w")
    with pytest.raises(StoreError, match="no such store"):
        Store.open(tmp_path / "missing.h5", "r")
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(tmp_path / "no" / "s.h5", "a")
    assert not (tmp_path / "missing.h5").exists() and not (tmp_path / "no").exists()


def test_the_file_holds_only_numbers_and_strings(tmp_path):
    path = tmp_path / "s.h5"
    with Store.open(path, run=RUN) as store:
        for table, records in SAMPLES.items():
            store.append_many(table, records)
    seen = []
    with h5py.File(path, "r") as handle:
        assert handle.attrs["format"] == FORMAT
        assert handle.attrs["schema_version"] == SCHEMA_VERSION

        def check(name, item):
            for value in item.attrs.values():
                assert isinstance(value, (str, np.integer)), (name, value)
            if isinstance(item, h5py.Dataset):
                assert item.dtype.kind in "ifb" or h5py.check_string_dtype(item.dtype), name
                seen.append(name)
        handle.visititems(check)
    assert len(seen) == sum(len(t.columns) for t in TABLES.values())


# ---- refused files: never modified, nothing created beside them -------------------------------

def _store_with_rows(path):
    with Store.open(path, run=RUN) as store:
        for table, records in SAMPLES.items():
            store.append_many(table, records)
    return path


def _refused(path, error_type, *fragments):
    before = fingerprint(path.parent)
    for mode in ("r", "a"):
        with pytest.raises(error_type) as info:
            Store.open(path, mode)
        message = str(info.value)
        assert str(path) in message, message
        for fragment in fragments:
            assert fragment in message, message
    assert fingerprint(path.parent) == before
    return info.value


def test_random_bytes_and_an_empty_file_are_refused_untouched(tmp_path):
    noise = tmp_path / "noise.h5"
    noise.write_bytes(np.random.default_rng(1).bytes(8192))
    _refused(noise, StoreFormatError, "not a readable HDF5 file")
    empty = tmp_path / "empty.h5"
    empty.write_bytes(b"")
    _refused(empty, StoreFormatError, "not a readable HDF5 file")


def test_a_truncated_store_is_refused_untouched(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _refused(path, StoreFormatError, "not a hybridtune store")


def test_a_foreign_hdf5_file_is_refused_untouched(tmp_path):
    plain = tmp_path / "plain.h5"
    with h5py.File(plain, "w") as handle:
        handle["temperature"] = np.arange(4.0)
        handle.attrs["units"] = "K"
    _refused(plain, StoreFormatError, "without the root attribute format", "/temperature")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as handle:
        handle.attrs["format"] = "another-tool"
    _refused(other, StoreFormatError, "'another-tool'")


def test_another_schema_version_is_refused_with_both_versions(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    with h5py.File(path, "r+") as handle:
        handle.attrs["schema_version"] = np.int64(SCHEMA_VERSION - 1)
    error = _refused(path, StoreVersionError, f"schema_version {SCHEMA_VERSION - 1}",
                     f"schema_version {SCHEMA_VERSION}")
    assert (error.found, error.expected) == (SCHEMA_VERSION - 1, SCHEMA_VERSION)


def test_a_store_missing_a_table_is_refused_untouched(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    with h5py.File(path, "r+") as handle:
        del handle["tables/comm_fits"]
    _refused(path, StoreFormatError, "tables")


# ---- the journal: replay is idempotent, a torn last record is dropped, damage is refused --------

def _journal_of_open_writer(path, batches):
    """The store as it was before, and the journal a writer had after appending batches."""
    before = path.read_bytes()
    with Store.open(path, "a") as store:
        for table, records in batches:
            store.append_many(table, [dict(r, run_id="r") for r in records])
        journal = path.with_name(path.name + ".journal").read_bytes()
    return before, journal


def test_a_journal_already_folded_in_is_not_replayed_twice(tmp_path):
    # the state of a writer killed between renaming the new file into place and removing the journal
    path = _store_with_rows(tmp_path / "s.h5")
    _, journal = _journal_of_open_writer(path, [("kernels", SAMPLES["kernels"])])
    path.with_name("s.h5.journal").write_bytes(journal)
    with Store.open(path, "r") as reader:
        assert reader.frame("kernels").code_hash.tolist() == ["c1", "c2", "c1", "c2"]
    with Store.open(path, "a") as writer:
        assert writer.rows("kernels") == 4
    with Store.open(path, "r") as reader:
        assert reader.rows("kernels") == 4


def test_a_torn_last_journal_line_loses_only_that_record(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    before, journal = _journal_of_open_writer(
        path, [("kernels", SAMPLES["kernels"][:1]), ("kernels", SAMPLES["kernels"][1:])])
    path.write_bytes(before)
    path.with_name("s.h5.journal").write_bytes(journal[:-25])
    with Store.open(path, "r") as reader:
        assert reader.frame("kernels").code_hash.tolist() == ["c1", "c2", "c1"]
    with Store.open(path, "a") as writer:
        writer.append("kernels", **SAMPLES["kernels"][1], run_id="r")
    with Store.open(path, "r") as reader:
        assert reader.frame("kernels").code_hash.tolist() == ["c1", "c2", "c1", "c2"]
    assert not path.with_name("s.h5.journal").exists()


def test_a_damaged_journal_is_refused_with_its_line_and_left_alone(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    before, journal = _journal_of_open_writer(
        path, [("kernels", SAMPLES["kernels"][:1]), ("kernels", SAMPLES["kernels"][1:]),
               ("comm_fits", SAMPLES["comm_fits"])])
    path.write_bytes(before)
    lines = journal.split(b"\n")
    lines[2] = b'{"seq": 9, "table": "kernels", "colu'
    journal_file = path.with_name("s.h5.journal")
    journal_file.write_bytes(b"\n".join(lines))
    error = _refused(path, StoreFormatError, str(journal_file), "line 3")
    assert error.path == str(journal_file)


def test_a_journal_of_another_store_is_refused(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    _, journal = _journal_of_open_writer(path, [("kernels", SAMPLES["kernels"])])
    other = _store_with_rows(tmp_path / "other.h5")
    other.with_name("other.h5.journal").write_bytes(journal)
    _refused(other, StoreFormatError, "a journal of another store")
    os.remove(other.with_name("other.h5.journal"))
    with Store.open(other, "r") as reader:
        assert reader.rows("kernels") == 2


def test_a_writer_without_records_leaves_the_file_as_it_was(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    before = fingerprint(tmp_path)
    with Store.open(path, "a") as store:
        assert store.rows("kernels") == 2
    assert fingerprint(tmp_path) == before


def test_a_symlinked_store_stays_a_link_and_fsync_mode_keeps_records(tmp_path):
    target = _store_with_rows(tmp_path / "data.h5")
    link = tmp_path / "link.h5"
    link.symlink_to(target)
    with Store.open(link, "a", fsync=True) as store:
        store.append_many("kernels", [dict(r, run_id="r") for r in SAMPLES["kernels"]])
    assert link.is_symlink()
    with Store.open(target, "r") as reader:
        assert reader.rows("kernels") == 4


def test_a_journal_with_records_but_no_store_file_is_refused(tmp_path):
    path = _store_with_rows(tmp_path / "s.h5")
    _, journal = _journal_of_open_writer(path, [("kernels", SAMPLES["kernels"])])
    journal_file = path.with_name("s.h5.journal")
    journal_file.write_bytes(journal)
    path.unlink()
    with pytest.raises(StoreFormatError, match="no store file") as info:
        Store.open(path, "a")
    assert str(journal_file) in str(info.value)
    assert journal_file.read_bytes() == journal and not path.exists()
