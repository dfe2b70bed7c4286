"""The correction worker of `predict --corrected`: a second process gives the corrections the command would compute itself, and errors still come from the command."""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from hybridtune.commands.main import main
from hybridtune.pipeline.corrections import corrections_of, prepared_corrections
from hybridtune.pipeline.store_frames import machine_rows, read_rows
from hybridtune.pipeline.correction_worker import CorrectionWorker
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"


@pytest.fixture
def trained(tmp_path, capsys):
    path = tmp_path / "learn.h5"
    shutil.copy(FIXTURE, path)
    assert main(["train", "--db", str(path), "--kind", "gp"]) == 0
    capsys.readouterr()
    rows, _ = read_rows(str(path))
    return str(path), rows.machine_sha256, rows.configurations()


@pytest.mark.parametrize("store_changed", [False, True])
def test_the_worker_answers_what_the_command_computes(trained, store_changed):
    path, machine, configurations = trained
    expected = corrections_of(prepared_corrections(path, machine), configurations)
    with CorrectionWorker(path, machine) as worker:
        assert worker._process is not None and worker._process.is_alive()
        answer = worker.corrections(configurations, store_changed)
    assert answer[0] == expected[0]
    assert answer[1].keys() == expected[1].keys() and len(answer[1]) == len(configurations)
    for key, items in expected[1].items():
        assert answer[1][key] == items and len(items) > 0


def test_an_error_is_raised_by_the_command_not_lost_in_the_worker(tmp_path):
    path = tmp_path / "learn.h5"
    shutil.copy(FIXTURE, path)          # no model trained
    rows, _ = read_rows(str(path))
    with CorrectionWorker(str(path), rows.machine_sha256) as worker:
        with pytest.raises(RequestError, match="has no model for machine file"):
            worker.corrections(rows.configurations(), False)


def test_closing_without_asking_ends_the_worker(trained):
    path, machine, _ = trained
    worker = CorrectionWorker(path, machine)
    process = worker._process
    worker.close()
    assert not process.is_alive()


def test_the_corrections_are_read_back_without_scikit_learn(trained):
    """The command waits for them after its offline stage; importing scikit-learn there would
    cost it seconds."""
    path, machine, configurations = trained
    answer = corrections_of(prepared_corrections(path, machine), configurations)
    code = ("import pickle, sys; note, corrected = pickle.load(sys.stdin.buffer); "
            "item = next(iter(next(iter(corrected.values())).values())); "
            "print(type(item).__name__, item.corrected_s > 0, 'sklearn' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(answer),
                          capture_output=True, check=True)
    assert done.stdout.decode().split() == ["Corrected", "True", "False"]


def test_the_rows_of_one_machine_file_are_those_read_rows_gives(tmp_path):
    path = tmp_path / "two-machines.h5"
    shutil.copy(FIXTURE, path)
    mine = read_rows(str(path))[0].machine_sha256
    other = "0f" * 32
    with Store.open(path, "r") as store:     # the latest ranking's row of each variant
        stored = store.frame("variant_predictions")
    predictions = stored.drop_duplicates(["method", "ivp", "n", "threads", "variant"], keep="last")
    moved = predictions.assign(
        predicted_s=predictions["predicted_s"] * 2,
        features=[{**f, "machine_sha256": other} if f.get("machine_sha256") == mine else f
                  for f in predictions["features"]])
    with Store.open(path, "a", run={"command": "test"}) as store:
        store.append_many("variant_predictions", moved.iloc[::3].to_dict("records"))
    for machine in (mine, other):
        expected, _ = read_rows(str(path), machine)
        rows, frames = machine_rows(str(path), machine)
        assert (rows.machine_sha256, rows.feature_schema) == (machine, expected.feature_schema)
        pd.testing.assert_frame_equal(rows.frame, expected.frame)
        pd.testing.assert_frame_equal(rows.every, expected.every)
        assert len(frames["variant_predictions"]) < len(stored) + len(moved.iloc[::3])
    assert len(machine_rows(str(path), other)[0].frame) == len(moved.iloc[::3])
    with pytest.raises(RequestError) as expected:
        read_rows(str(path), "ee" * 32)
    with pytest.raises(RequestError) as refused:    # the whole store read again to say so
        machine_rows(str(path), "ee" * 32)
    assert str(refused.value) == str(expected.value)
    assert mine[:12] in str(refused.value) and other[:12] in str(refused.value)
