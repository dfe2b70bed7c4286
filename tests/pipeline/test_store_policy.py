"""The store policy: the shipped ground truth refused for writing, a run record with each write, dry runs read only."""

from __future__ import annotations

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.pipeline.store_policy import (GROUND_TRUTH_CAMPAIGN, open_store, read_only_store,
                                              store_path, writable)
from hybridtune.store import Store

SHIPPED = PROJECT_ROOT / "data" / "groundtruth" / "groundtruth.h5"


def test_the_shipped_ground_truth_is_written_only_by_its_campaign(monkeypatch, tmp_path):
    monkeypatch.delenv(GROUND_TRUTH_CAMPAIGN, raising=False)
    with pytest.raises(RequestError, match="only jobs/groundtruth.sh writes"):
        writable(str(SHIPPED))
    monkeypatch.setenv(GROUND_TRUTH_CAMPAIGN, "1")
    assert writable(str(SHIPPED)) == SHIPPED
    assert writable(str(tmp_path / "mine.h5")) == tmp_path / "mine.h5"


def test_without_a_path_the_default_store_is_written(tmp_path):
    assert writable(None) == tmp_path / "default-store.h5"       # conftest's own_store
    assert store_path(None) == str(tmp_path / "default-store.h5")
    assert store_path("given.h5") == "given.h5"


def test_open_store_records_the_command_and_refuses_a_missing_folder(tmp_path, default_scenario):
    path = tmp_path / "run.h5"
    with open_store(str(path), default_scenario, "predict", {"note": 1}) as store:
        store.append_many("measurements", [])
    with Store.open(path, "r") as store:
        runs = store.frame("runs")
    assert list(runs["command"]) == ["predict"]
    assert runs["machine_sha256"].iloc[0] == default_scenario.machine.sha256
    with pytest.raises(HybridtuneError, match="expected an existing folder"):
        open_store(str(tmp_path / "missing" / "run.h5"), default_scenario, "predict")
    assert not (tmp_path / "missing").exists()


def test_a_dry_run_reads_an_existing_store_and_creates_none(tmp_path, default_scenario):
    missing = tmp_path / "none.h5"
    with read_only_store(str(missing)) as store:
        assert store is None
    assert not missing.exists()
    path = tmp_path / "run.h5"
    with open_store(str(path), default_scenario, "tune"):
        pass
    before = path.read_bytes()
    with read_only_store(str(path)) as store:
        assert list(store.frame("runs")["command"]) == ["tune"]
    assert path.read_bytes() == before
