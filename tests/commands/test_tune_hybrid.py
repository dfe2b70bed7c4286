"""tune --strategy hybrid: the offline model as prior without a trained model, the trained Gaussian process with one (shared by an IVP's sizes), the stopping rule, --max-measurements, two emulated nodes, bad input."""

from __future__ import annotations

import json
import shutil

import h5py
import pytest

from tune_support import BIN, measurement_rows, run
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.measure.provenance import hardware_identity
from hybridtune.store import Store

pytestmark = pytest.mark.slow

DATA = PROJECT_ROOT / "tests" / "data"
LEARN = DATA / "learn"
SCENARIO = str(LEARN / "learn.scenario.yaml")


def _fixture_hardware() -> str:
    with Store.open(LEARN / "fixture.h5", "r") as store:
        return store.frame("measurements")["hardware_id"].value_counts().index[0]


FIXTURE_HARDWARE = _fixture_hardware()


@pytest.fixture
def fixture_copy(tmp_path):
    """The learning fixture (every variant of skeleton F measured on four IVPs at n 600 and 6000,
    on the host that made it): its predictions are reused, its measurements are ignored with
    --fresh."""
    path = tmp_path / "store.h5"
    shutil.copy(LEARN / "fixture.h5", path)
    return path


def as_if_measured_here(path) -> None:
    """A fake of provenance, stated: a trained model is a prior only on the hardware it was
    trained on, and the fixture's timings come from another host. Measuring its 128 variants
    here would take minutes, so the copy's measurements are relabelled as this host's."""
    with h5py.File(path, "r+") as handle:
        column = handle["tables/measurements/hardware_id"]
        column[...] = [hardware_identity()["hardware_id"]] * len(column)


def hybrid(store, *extra, ranks=0):
    command = [str(BIN / "hybridtune"), "tune", SCENARIO, "--db", str(store), "-n", "6000",
               "--budget", "0.2", "--strategy", "hybrid", "--fresh", "--head", "0", "--json",
               *extra]
    return run([str(BIN / "mpiexec"), "-n", str(ranks), *command] if ranks else command)


def measured_once(store, before: int) -> bool:
    """Every variant measured by this run (rows after the first `before`) was timed alone once
    per configuration."""
    counts: dict = {}
    for row in measurement_rows(store)[before:]:
        if row["timing"] == "alone":
            key = (row["ivp"], row["n"], row["id"])
            counts[key] = counts.get(key, 0) + 1
    return bool(counts) and set(counts.values()) == {1}


def test_without_a_model_the_shipped_kernel_effects_are_the_prior_and_it_says_so(fixture_copy):
    before = len(measurement_rows(fixture_copy))
    done = hybrid(fixture_copy)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert any("the kernel effects measured on 34 whole pools" in note for note in result["notes"])
    assert "no trained model for this hardware; the kernel effects measured on" in done.stderr
    assert "the store has no Gaussian process for machine file" in done.stderr
    for record in result["configurations"]:
        assert record["strategy"] == f"hybrid:{HYBRID_STOP:g}" and record["pool"] == 32
        assert 1 <= record["measured_now"] <= 32
        assert record["chosen"]["id"] in record["shortlisted"]
    assert measured_once(fixture_copy, before)


@pytest.mark.skipif(FIXTURE_HARDWARE == hardware_identity()["hardware_id"],
                    reason="runs on the host the fixture was measured on")
def test_a_model_of_other_hardware_is_no_prior_and_the_output_says_whose_it_is(fixture_copy):
    # a model of the fixture's host (all of its measurements) is no prior here, and it says so
    trained = run([str(BIN / "hybridtune"), "train", "--db", str(fixture_copy), "--kind", "gp"])
    assert trained.returncode == 0, trained.stderr
    done = hybrid(fixture_copy, "--max-measurements", "1")
    assert done.returncode == 0, done.stderr
    assert "no trained model for this hardware; the kernel effects" in done.stderr
    assert ("Gaussian process for this machine file was trained on measurements of hardware "
            f"{FIXTURE_HARDWARE[:12]}, this host is {hardware_identity()['hardware_id'][:12]}"
            in done.stderr)


def test_a_trained_model_is_the_prior_and_fewer_variants_are_measured(fixture_copy):
    as_if_measured_here(fixture_copy)
    trained = run([str(BIN / "hybridtune"), "train", "--db", str(fixture_copy), "--kind", "gp"])
    assert trained.returncode == 0, trained.stderr
    done = hybrid(fixture_copy)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert any("trained Gaussian process" in note for note in result["notes"])
    measured = [record["measured_now"] for record in result["configurations"]]
    # the belief carries the model's errors on left-out IVPs, so a configuration may need the
    # whole pool; together they stop before it
    assert all(1 <= count <= 32 for count in measured) and sum(measured) < 4 * 32, measured
    with Store.open(fixture_copy, "r") as store:
        frame = store.frame("measurements")
    for record in result["configurations"]:
        mine = frame[(frame.ivp == record["ivp"]) & (frame.n == 6000)]
        assert record["chosen"]["id"] in set(mine.id)


def test_prior_takes_the_model_of_another_store_and_leaves_that_store_alone(fixture_copy,
                                                                            tmp_path):
    as_if_measured_here(fixture_copy)
    trained = run([str(BIN / "hybridtune"), "train", "--db", str(fixture_copy), "--kind", "gp"])
    assert trained.returncode == 0, trained.stderr
    before = fixture_copy.read_bytes()
    mine = tmp_path / "mine.h5"
    shutil.copy(LEARN / "fixture.h5", mine)        # predictions, no model
    done = hybrid(mine, "--prior", str(fixture_copy), "--max-measurements", "2")
    assert done.returncode == 0, done.stderr
    [note] = json.loads(done.stdout)["notes"]
    assert "trained Gaussian process" in note and f"from --prior {fixture_copy}" in note
    assert fixture_copy.read_bytes() == before and len(measurement_rows(mine)) > 0


def test_prior_stores_without_a_model_of_this_hardware_lend_their_kernel_effects(fixture_copy,
                                                                                 tmp_path):
    # the fixture's and the methods fixture's whole pools (8 and 4), neither store has a model
    mine = tmp_path / "mine.h5"
    shutil.copy(LEARN / "fixture.h5", mine)
    other = DATA / "methods" / "fixture.h5"
    done = hybrid(mine, "--prior", str(fixture_copy), "--prior", str(other),
                  "--max-measurements", "2")
    assert done.returncode == 0, done.stderr
    [note] = json.loads(done.stdout)["notes"]
    assert "the kernel effects measured on 12 whole pools of Intel(R) Xeon(R) Processor" in note
    assert f"from --prior {fixture_copy}, {other}" in note


def test_a_prior_store_with_neither_a_model_nor_a_whole_pool_is_refused(tmp_path):
    empty = tmp_path / "empty.h5"
    with Store.open(empty, "a"):
        pass
    store = tmp_path / "never.h5"
    done = run([str(BIN / "hybridtune"), "tune", SCENARIO, "--db", str(store), "--strategy",
                "hybrid", "--prior", str(empty)])
    assert done.returncode == 2, done.stderr
    assert f"--prior {empty}: the store holds no trained model" in done.stderr
    assert done.stderr.count("error:") == 1 and not store.exists()


def test_an_ivps_sizes_share_the_trained_belief_and_each_ends_on_its_own(fixture_copy):
    as_if_measured_here(fixture_copy)
    trained = run([str(BIN / "hybridtune"), "train", "--db", str(fixture_copy), "--kind", "gp"])
    assert trained.returncode == 0, trained.stderr
    before = len(measurement_rows(fixture_copy))
    done = run([str(BIN / "hybridtune"), "tune", SCENARIO, "--db", str(fixture_copy), "--budget",
                "0.2", "--strategy", "hybrid", "--fresh", "--head", "0", "--json"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # the model learnt how its errors at n = 600 and 6000 of one IVP correlate, and says so
    assert any("with the same variant at a tenfold size of the same IVP" in note
               for note in result["notes"]), result["notes"]
    records = result["configurations"]
    assert sorted((r["ivp"], r["n"]) for r in records) == sorted(
        (ivp, n) for ivp in ("Cusp", "InverterChain", "Medakzo", "Wave1D") for n in (600, 6000))
    for record in records:
        assert 1 <= record["measured_now"] <= 32
        assert record["ended_by"]
    assert measured_once(fixture_copy, before)


def test_max_measurements_caps_every_configuration(fixture_copy):
    done = hybrid(fixture_copy, "--max-measurements", "3")
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)["configurations"]
    assert all(record["measured_now"] <= 3 for record in records)
    # each says why it stopped: the cap where it measured 3, else the stopping rule
    for record in records:
        if record["measured_now"] == 3:
            assert record["ended_by"] == "--max-measurements 3", record
        else:
            assert record["ended_by"].endswith("variants expected 3% faster than the best held "
                                               f"(below {HYBRID_STOP:g})"), record


@pytest.mark.mpi
def test_two_ranks_run_the_hybrid_search_with_one_measurement_in_flight_each(fixture_copy):
    before = len(measurement_rows(fixture_copy))
    done = hybrid(fixture_copy, "--max-measurements", "4", ranks=2)
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)["configurations"]
    assert all(1 <= record["measured_now"] <= 4 for record in records)
    assert measured_once(fixture_copy, before)


@pytest.mark.parametrize("extra, expected", [
    (["--strategy", "hybrid:0"], "hybrid[:E] with E, the expected number of faster variants"),
    (["--strategy", "hybrid", "--max-measurements", "0"], "--max-measurements 0: expected a count"),
    (["--strategy", "top_k:3", "--max-measurements", "3"], "only the hybrid strategy stops"),
    (["--strategy", "top_k:3", "--prior", str(LEARN / "fixture.h5")],
     "only the hybrid strategy has a belief"),
    (["--strategy", "hybrid", "--prior", "/no/such.h5"], "--prior /no/such.h5: no store"),
])
def test_bad_hybrid_requests_are_refused_before_anything_is_written(tmp_path, extra, expected):
    store = tmp_path / "never.h5"
    done = run([str(BIN / "hybridtune"), "tune", SCENARIO, "--db", str(store), *extra])
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert done.stderr.count("error:") == 1 and not store.exists()


@pytest.mark.parametrize("command", ["tune", "train"])
def test_the_shipped_ground_truth_is_written_by_its_campaign_alone(command):
    shipped = PROJECT_ROOT / "data" / "groundtruth" / "ground-truth.h5"
    before = shipped.stat().st_mtime_ns
    argv = [SCENARIO, "--strategy", "hybrid"] if command == "tune" else []
    done = run([str(BIN / "hybridtune"), command, *argv, "--db", str(shipped)])
    assert done.returncode == 2, done.stderr
    assert "only jobs/groundtruth.sh writes" in done.stderr and "--prior" in done.stderr
    assert shipped.stat().st_mtime_ns == before
