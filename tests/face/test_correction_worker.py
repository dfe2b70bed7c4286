"""The correction worker of `predict --corrected`: a second process gives the corrections the command would compute itself, and errors still come from the command."""

from __future__ import annotations

import shutil

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from hybridtune.face.cli import main
from hybridtune.face.cli_learn import corrections_of, prepared_corrections, read_rows
from hybridtune.face.correction_worker import CorrectionWorker

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
