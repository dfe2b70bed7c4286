"""predict and tune from the command line: rankings, JSON fields, resuming, and stores refused."""

from __future__ import annotations

import json

import h5py
import pytest

from hybridtune.commands.main import main
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.store import Store

SMALL = str(PROJECT_ROOT / "tests" / "data" / "predict" / "small.scenario.yaml")

pytestmark = pytest.mark.slow


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cli") / "store.h5")


def test_predict_json_ranks_with_a_breakdown(capsys, db):
    code, out, err = run(capsys, "predict", SMALL, "--db", db, "-n", "6000", "--threads", "1",
                         "--json")
    assert code == 0, err
    answer = json.loads(out)
    [config] = answer["configurations"]
    assert answer["failures"] == [] and err == ""
    assert (config["ivp"], config["n"], config["threads"]) == ("InverterChain", 6000, 1)
    variants = config["variants"]
    assert len(variants) == 32
    assert [v["rank"] for v in variants] == list(range(1, 33))
    first = variants[0]
    assert {"id", "predicted_s", "rank", "kernels", "t_com_s", "shortlisted"} <= set(first)
    assert first["shortlisted"] and first["predicted_s"] > 0
    kernels = first["kernels"]
    assert {k["template"] for k in kernels} == {"RHS_LC_predictor", "RHS_LC", "RHS_Approx_Update"}
    assert sum(k["seconds"] for k in kernels) + first["t_com_s"] == pytest.approx(first["predicted_s"])
    assert all(part["cycles_per_cl"] > 0 for k in kernels for part in k["parts"])


def test_predict_text_is_warm_the_second_time(capsys, db):
    code, out, err = run(capsys, "predict", SMALL, "--db", db, "-n", "6000", "--threads", "1",
                         "--head", "3")
    assert code == 0, err
    assert "radauIIA7 InverterChain n=6000 threads=1: 32 ranked, 0 failed" in out
    assert "0 kerncraft analyses this run" in out
    assert "0 of 1 rankings new to the store" in out      # the JSON run stored this ranking
    assert out.count("% ") >= 3
    code, out, err = run(capsys, "predict", SMALL, "--db", db, "-n", "7000", "--threads", "1")
    assert code == 0 and "1 of 1 rankings new to the store" in out, err
    with Store.open(db, "r") as store:
        sets = store.frame("prediction_sets")
        assert store.rows("variant_predictions") == 2 * 32 == sets["variants"].sum()
        assert sorted(sets["n"]) == [6000, 7000] and sets["digest"].is_unique
        runs = store.frame("runs")
        predicting = list(runs["run_id"][runs["command"] == "predict"])
        assert list(sets["run_id"]) == [predicting[0], predicting[-1]]  # not the warm run's


def test_tune_measures_the_shortlist_and_resumes(capsys, db):
    argv = ["tune", SMALL, "--db", db, "-n", "6000", "--threads", "1", "--budget", "0.1",
            "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    [record] = json.loads(out)["configurations"]
    assert record["chosen"] is not None and record["chosen"]["measured_s"] > 0
    assert record["measured_now"] == len(record["shortlisted"]) >= 1
    assert record["chosen"]["id"] in record["shortlisted"]
    with Store.open(db, "r") as store:
        measured = store.frame("measurements")
    assert set(record["shortlisted"]) <= set(measured["id"])
    code, out, err = run(capsys, *argv)
    [again] = json.loads(out)["configurations"]
    assert code == 0 and again["measured_now"] == 0 and again["chosen"] == record["chosen"]


def test_a_foreign_hdf5_file_is_refused_and_left_alone(capsys, tmp_path):
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as handle:
        handle["x"] = [1, 2, 3]
    before = foreign.read_bytes()
    code, out, err = run(capsys, "predict", SMALL, "--db", str(foreign), "-n", "6000")
    assert code == 2 and str(foreign) in err and out == ""
    assert foreign.read_bytes() == before


def test_a_second_writer_is_refused(capsys, tmp_path):
    path = tmp_path / "busy.h5"
    with Store.open(path, "a", run={"command": "holder"}):
        code, out, err = run(capsys, "predict", SMALL, "--db", str(path), "-n", "6000")
    assert code == 2 and "open for writing by another process" in err


@pytest.mark.parametrize("argv, message", [
    (["-n", "0"], "-n: expected a size >= 1"),
    (["--threads", "0"], "expected counts >= 1"),
    (["--head", "-1"], "--head: expected a count >= 0"),
])
def test_bad_requests(capsys, argv, message, tmp_path):
    code, out, err = run(capsys, "predict", SMALL, "--db", str(tmp_path / "s.h5"), *argv)
    assert code == 2 and message in err and out == ""
    assert not (tmp_path / "s.h5").exists()


def test_a_machine_kerncraft_cannot_use_fails_loudly_by_cause(capsys, tmp_path, monkeypatch):
    from tests_support import SHARED_MACHINES
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    broken = tmp_path / "broken.yml"
    broken.write_text((SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
                      .replace("OSACA: SKX", "OSACA: NOSUCHARCH"))
    scenario = tmp_path / "broken.scenario.yaml"
    scenario.write_text(open(SMALL).read().replace("machine: SkylakeSP_Gold-6148",
                                                   f"machine: {broken}"))
    argv = ["predict", str(scenario), "--db", str(tmp_path / "s.h5"), "-n", "6000"]
    code, out, err = run(capsys, *argv)
    assert code == 4, err
    assert out.count("0 ranked, 32 failed") == 2           # threads 1 and 2
    cause = "ValueError: Unknown architecture 'nosucharch'."
    [grouped] = [line for line in out.splitlines() if "kerncraft analyses failed" in line]
    assert grouped.startswith(f"13 of 13 kerncraft analyses failed: {cause} (first: RHS_")
    assert out.count(f"  not ranked: 32: {cause}") == 2
    assert out.splitlines()[-1].startswith(
        f"2 of 2 configurations have no ranked variant: every variant failed ({cause}")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 4
    answer = json.loads(out)
    [group] = answer["failures"]
    assert group["count"] == len(group["failed"]) == 13 and group["cause"] == cause
    assert all("nosucharch" in item["message"] for item in group["failed"])
    assert grouped in err.splitlines() and "2 of 2 configurations" in err.splitlines()[-1]
    with Store.open(tmp_path / "s.h5", "r") as store:
        stored = store.frame("kernel_predictions")
    assert (stored["status"] == "failed").all() and stored["message"].str.contains(
        "nosucharch").all()


def scenario_with_flags(folder, flags: str) -> str:
    """The small scenario on the Skylake-SP machine file with gcc only, given these flags."""
    text = (PROJECT_ROOT / "data" / "machines" / "SkylakeSP_Gold-6148.yml").read_text()
    start = text.index("compiler: !!omap")
    machine = folder / "machine.yml"
    machine.write_text(text[:start] + f"compiler: !!omap\n- gcc: {flags}\n"
                       + text[text.index("\n\n", start):])
    scenario = folder / "s.scenario.yaml"
    scenario.write_text(open(SMALL).read().replace("machine: SkylakeSP_Gold-6148",
                                                   f"machine: {machine}"))
    return str(scenario)


@pytest.mark.parametrize("command", ["predict", "tune"])
def test_a_machine_file_whose_compiler_rejects_a_flag_is_bad_input(capsys, tmp_path, command):
    scenario = scenario_with_flags(tmp_path, "-O3 -march=znver9 -fopenmp")
    db = tmp_path / "store.h5"
    code, out, err = run(capsys, command, scenario, "--db", str(db))
    assert code == 2 and not out
    [line] = err.splitlines()
    assert str(tmp_path / "machine.yml") in line and "'compiler'" in line
    assert "'-march=znver9'" in line and "bad value 'znver9'" in line and "make probe" in line
    assert not db.exists()


def test_a_machine_file_whose_compilers_are_missing_is_bad_input(capsys, tmp_path):
    scenario = scenario_with_flags(tmp_path, "-O3")
    machine = tmp_path / "machine.yml"
    machine.write_text(machine.read_text().replace("- gcc: -O3", "- no-such-cc: -O3"))
    code, out, err = run(capsys, "predict", scenario, "--db", str(tmp_path / "store.h5"))
    assert code == 2 and "found none of the file's (no-such-cc)" in err and "make probe" in err
    assert not (tmp_path / "store.h5").exists()
