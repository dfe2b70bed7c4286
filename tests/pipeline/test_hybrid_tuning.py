"""The hybrid run's searches share one belief per IVP: plans grouped by method and IVP, a group held under MAX_TOGETHER candidates; a --prior store's model of other hardware serves, widened and named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hybridtune.pipeline import hybrid_searches as hybrid_tuning
from hybridtune.pipeline.hybrid_searches import prior_model, together
from hybridtune.learn.prior import HARDWARE_SPREAD
from hybridtune.learn.table import PREDICTION_COLUMNS
from hybridtune.store import Store


def _plan(method: str, ivp: str, n: int, candidates: int):
    configuration = SimpleNamespace(method=SimpleNamespace(name=method),
                                    ivp=SimpleNamespace(name=ivp), n=n, threads=1)
    return SimpleNamespace(configuration=configuration, shortlisted=[None] * candidates)


def test_plans_of_one_method_and_ivp_share_a_group_in_their_order():
    plans = [_plan("m", "A", 600, 10), _plan("m", "B", 600, 10), _plan("m", "A", 6000, 10),
             _plan("other", "A", 600, 10), _plan("m", "B", 6000, 10)]
    assert together(plans) == [[0, 2], [1, 4], [3]]


def test_a_group_holds_at_most_max_together_candidates(monkeypatch):
    monkeypatch.setattr(hybrid_tuning, "MAX_TOGETHER", 25)
    plans = [_plan("m", "A", n, 10) for n in (600, 1200, 2400, 4800, 9600)]
    assert together(plans) == [[0, 1], [2, 3], [4]]


@pytest.mark.slow
def test_a_prior_stores_model_of_other_hardware_serves_widened_and_named(tmp_path, fixture_store):
    store = tmp_path / "prior.h5"
    shutil.copy(fixture_store, store)
    done = subprocess.run([str(Path(sys.executable).parent / "hybridtune"), "train", "--db",
                           str(store), "--kind", "gp", "--max-rows", "200"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # "this host" is named by hand: the test must see other hardware whatever host it runs on
    with Store.open(store, "r") as source:
        predictions = source.frame("variant_predictions", PREDICTION_COLUMNS)
        models = source.frame("models")
        trained_on = models["hardware_id"].iloc[-1]
        elsewhere = "f" * 24
        fitted, why_not = prior_model(source, predictions, "0" * 64, elsewhere,
                                      other_hardware=True)
        assert why_not == "" and fitted.kind == "gp"
        assert fitted.other_hardware == "Intel(R) Xeon(R) Processor"
        assert fitted.hardware_spread == HARDWARE_SPREAD
        none, why = prior_model(source, predictions, models["machine_sha256"].iloc[-1], elsewhere)
        assert none is None and trained_on[:12] in why and "this host" in why
        own, _ = prior_model(source, predictions, models["machine_sha256"].iloc[-1], trained_on)
        assert own.other_hardware == "" and own.hardware_spread == 0.0
