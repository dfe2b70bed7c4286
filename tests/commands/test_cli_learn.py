"""train, evaluate and predict --corrected from the command line on the learning fixture store: models stored, strategies scored, corrected times with intervals, refusals with exit 2 that write nothing."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.commands.main import main
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
SCENARIO = str(PROJECT_ROOT / "tests" / "data" / "learn" / "learn.scenario.yaml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def copy(tmp_path):
    """A copy of the fixture store for one test to write into."""
    path = tmp_path / "learn.h5"
    shutil.copy(FIXTURE, path)
    return path


@pytest.fixture(scope="module")
def fixture_frames():
    with Store.open(FIXTURE, "r") as store:
        return store.frame("variant_predictions"), store.frame("measurements")


def _store(path, predictions=None, measurements=None):
    """A new store holding these rows (frames of the fixture's tables)."""
    with Store.open(path, "a", run={"command": "test"}) as store:
        if predictions is not None:
            store.append_many("variant_predictions", predictions.to_dict("records"))
        if measurements is not None:
            store.append_many("measurements", measurements.to_dict("records"))
    return path


def _models(path):
    with Store.open(path, "r") as store:
        return store.frame("models")


def test_train_stores_both_models_and_says_what_it_fitted_on(capsys, copy):
    code, out, err = run(capsys, "train", "--db", str(copy))
    assert code == 0, err
    models = _models(copy)
    assert list(models["kind"]) == ["linear", "gp"]
    assert list(models["training_rows"]) == [256, 256]
    for kind in ("linear", "gp"):
        line = next(line for line in out.splitlines() if line.startswith(f"{kind}:"))
        assert "fitted on all 256 measured variants" in line
        assert re.search(r"; \d+\.\d s; model [0-9a-f]{32}$", line), line
    assert "Matern(length" in out and "residual spread" in out
    assert f"stored in {copy} (machine file abe65fbbe563, feature schema variant-features-1)" in out
    with Store.open(copy, "r") as store:
        assert list(store.frame("runs")["command"])[-1] == "train"


def test_train_json_and_a_subsample_of_one_kind(capsys, copy):
    code, out, err = run(capsys, "train", "--db", str(copy), "--kind", "gp", "--max-rows", "40",
                         "--json")
    assert code == 0, err
    records = json.loads(out)
    assert [r["kind"] for r in records] == ["gp"]
    record = records[0]
    assert "training" not in record and record["training_rows"] == 40
    assert record["score"]["fit_seconds"] >= 0 and "r2_in_sample" in record["score"]
    assert set(record["params"]) >= {"features", "hyper", "constant", "length_scale", "noise_level"}
    models = _models(copy)
    assert list(models["model_id"]) == [record["model_id"]]
    assert len(models["training"][0]["row_ids"]) == 40
    code, out, err = run(capsys, "train", "--db", str(copy), "--kind", "linear", "--max-rows", "40")
    assert code == 0, err
    assert "linear: fitted on a stratified sample of 40 of 256 measured variants" in out


@pytest.mark.slow
def test_evaluate_json_scores_every_strategy(capsys, copy):
    code, out, err = run(capsys, "evaluate", "--db", str(copy), "--json", "--noise-seeds", "0")
    assert code == 0, err
    result = json.loads(out)
    assert result["noise"]["seeds"] == 1 and result["noise"]["source"].startswith("none")
    reliability = result["reliability"]
    assert sum(b["decisions"] for b in reliability["bins"]) == reliability["decisions"] > 0
    strategies = result["strategies"]
    k = round(strategies["hybrid"]["measured_mean"])
    assert set(strategies) == {"BestVariant", "RunAll+3 rounds", "RunAll", "preselect:5",
                               "preselect:10", "hybrid", "hybrid@12", "hybrid (no model)",
                               "hybrid (offline errors)", f"top_k:{k}", f"random:{k}"}
    fits = result["offline_errors"]["fits"]
    # the no-model prior of each left-out IVP is calibrated without it
    assert set(fits) == {"all", "Cusp", "InverterChain", "Medakzo", "Wave1D"}
    assert fits["all"]["pools"] == 8 and fits["Cusp"]["pools"] == 6
    for name, summary in strategies.items():
        for key in ("measured_mean", "loss_pct_max", "loss_pct_mean", "overhead_pct_mean",
                    "frac_loss_le_3pct", "score"):
            assert isinstance(summary[key], float), (name, key)
    assert strategies["RunAll"]["measured_mean"] == 32 and strategies["RunAll"]["loss_pct_max"] == 0
    assert set(result["accuracy"]) == {"Cusp", "InverterChain", "Medakzo", "Wave1D"}
    for accuracy in result["accuracy"].values():
        assert set(accuracy) == {"rows", "training_rows", "offline", "trivial", "linear", "gp",
                                 "gp_other_sizes"}
    assert len(result["configurations"]) == 8 and result["notes"] == []
    assert result["transfer"]["configurations"] == 8
    assert result["pass_agreement"] == {}           # one pass: nothing to compare
    code, text, err = run(capsys, "evaluate", "--db", str(copy), "--noise-seeds", "3")
    assert code == 0, err
    assert text.startswith("strategies on 8 whole-pool configurations")
    # the fixture holds one pass: its noise is the shipped model's, and the output says so
    assert "noise: the store holds one pass: drawn from the shipped ground truth's noise model" \
        in text
    assert "hybrid: its chance of the event (an unmeasured variant more than 3% faster" in text
    assert ("hybrid (no model), its prior the kernel effects of the other IVPs' pools: its "
            "chance") in text
    assert "the offline model's errors within" in text
    assert "Brier score" in text
    assert "mean over 3 seeds" in text
    assert "Two passes of the same variants" not in text
    assert "left-out IVP accuracy" in text and "first variant measured within 5%" in text
    assert "gp on a size or thread count never measured" in text
    assert "orders taken from other configurations' measured times" in text
    assert "by the same IVP's order at its nearest other n" in text
    assert _models(copy).empty       # evaluate trains its own models and stores none


@pytest.mark.slow
def test_predict_corrected_after_train_reuses_the_stored_kernel_predictions(capsys, copy):
    assert run(capsys, "train", "--db", str(copy))[0] == 0
    code, out, err = run(capsys, "predict", SCENARIO, "--db", str(copy), "--corrected")
    assert code == 0, err
    assert "0 kerncraft analyses this run" in out and "0 of 8 rankings new to the store" in out
    heads = [line for line in out.splitlines() if "by corrected time (95% interval" in line]
    assert len(heads) == 8
    ranked = re.findall(r"^\s+\d+\. (\S+)  (\S+) s \[(\S+), (\S+)\]  \(offline (\S+) s; "
                        r"measured (\S+) s\)$", out, re.MULTILINE)
    assert len(ranked) == 8 * 10            # every variant of the fixture was measured
    for _, corrected, low, high, offline, measured in ranked:
        assert float(low) < float(corrected) < float(high) and float(offline) > 0
        assert float(measured) > 0
    assert re.search(r"corrected by the gp model [0-9a-f]{12} fitted on 256 measured variants", out)
    code, out, err = run(capsys, "predict", SCENARIO, "--db", str(copy), "--corrected", "--json")
    assert code == 0, err
    variants = [v for config in json.loads(out)["configurations"] for v in config["variants"]]
    assert len(variants) == 256
    assert all(v["corrected"]["low_s"] < v["corrected"]["seconds"] < v["corrected"]["high_s"]
               and v["corrected"]["measured_s"] > 0 for v in variants)


def _refused(capsys, path, *argv, says: str):
    """argv exits 2 with one error line containing says, and path's bytes are unchanged."""
    before = path.read_bytes() if path.exists() else None
    files = sorted(path.parent.iterdir())
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert says in err, err
    assert (path.read_bytes() if path.exists() else None) == before
    assert sorted(path.parent.iterdir()) == files


def test_train_refuses_a_missing_or_empty_store(capsys, tmp_path):
    missing = tmp_path / "missing.h5"
    _refused(capsys, missing, "train", "--db", str(missing), says="no such store")
    empty = _store(tmp_path / "empty.h5")
    _refused(capsys, empty, "train", "--db", str(empty), says="holds no variant predictions")


def test_train_refuses_predictions_without_feature_rows(capsys, tmp_path, fixture_frames):
    predictions, measurements = fixture_frames
    old = _store(tmp_path / "old.h5", predictions.assign(features=[{}] * len(predictions)),
                 measurements)
    _refused(capsys, old, "train", "--db", str(old), says="have no feature rows")


def test_train_refuses_too_few_measurements(capsys, tmp_path, fixture_frames):
    predictions, measurements = fixture_frames
    few = _store(tmp_path / "few.h5", predictions,
                 measurements[measurements["ivp"] == "Cusp"].drop_duplicates("id").iloc[:12])
    _refused(capsys, few, "train", "--db", str(few), says="12 measured variants")
    _refused(capsys, few, "train", "--db", str(few), says="needs at least 20")


@pytest.mark.slow
def test_evaluate_shows_what_a_space_filling_share_of_the_training_runs_buys(capsys, copy):
    code, out, err = run(capsys, "evaluate", "--db", str(copy), "--json", "--noise-seeds", "1",
                         "--sample-shares", "0,0.5")
    assert code == 0, err
    none, half = json.loads(out)["sample_shares"]
    assert (none["strategy"], half["strategy"]) == ("preselect:5", "preselect:5+sample:0.5")
    # a share of one half doubles what the training runs measure (rounded up per configuration)
    assert half["training_measured_per_configuration"] >= \
        2 * none["training_measured_per_configuration"]
    for entry in (none, half):
        assert entry["ivps"] >= 1 and 0 <= entry["median_rel_error"] < 10
        assert -1 <= entry["kendall_tau"] <= 1 and entry["hybrid_measured_mean"] >= 1
    code, text, err = run(capsys, "evaluate", "--db", str(copy), "--noise-seeds", "0",
                          "--sample-shares", "0.25")
    assert code == 0, err
    assert "a space-filling share of the training runs' measurements" in text
    assert "preselect:5+sample:0.25" in text


def test_bad_options_are_refused_before_reading(capsys, copy):
    _refused(capsys, copy, "train", "--db", str(copy), "--max-rows", "0",
             says="--max-rows 0: expected a count >= 20")
    _refused(capsys, copy, "evaluate", "--db", str(copy), "--noise-seeds", "-1",
             says="--noise-seeds -1: expected 0 (no noise) or more")
    _refused(capsys, copy, "evaluate", "--db", str(copy), "--stop", "0",
             says="--stop 0: expected the number of faster variants hybrid stops below")
    _refused(capsys, copy, "evaluate", "--db", str(copy), "--sample-shares", "0,1",
             says="--sample-shares 0,1: expected shares 0 <= S < 1")


def test_evaluate_refuses_a_store_of_one_ivp(capsys, tmp_path, fixture_frames):
    predictions, measurements = fixture_frames
    one = _store(tmp_path / "one.h5", predictions[predictions["ivp"] == "Cusp"],
                 measurements[measurements["ivp"] == "Cusp"])
    _refused(capsys, one, "evaluate", "--db", str(one), says="cover 1 IVP(s)")


@pytest.mark.slow
def test_predict_corrected_without_a_model_names_train(capsys, copy):
    code, out, err = run(capsys, "predict", SCENARIO, "--db", str(copy), "--corrected")
    assert code == 2 and out == ""
    assert err == (f"error: --corrected: the store {copy} has no model for machine file "
                   f"abe65fbbe563: run `hybridtune train --db {copy}` first\n")


@pytest.mark.slow
def test_predict_corrected_without_a_model_writes_nothing(capsys, copy):
    _refused(capsys, copy, "predict", SCENARIO, "--db", str(copy), "--corrected",
             says="run `hybridtune train")


def test_train_on_a_named_machine_file_and_one_the_store_never_predicted_with(capsys, copy):
    machines = PROJECT_ROOT / "tests" / "data" / "shared" / "machines"
    code, out, err = run(capsys, "train", "--db", str(copy), "--kind", "linear", "--machine",
                         str(machines / "SkylakeSP_Gold-6148.yml"))
    assert code == 0, err
    assert "(machine file abe65fbbe563," in out and "also holds predictions" not in out
    before = _models(copy)
    code, out, err = run(capsys, "train", "--db", str(copy), "--machine",
                         str(machines / "Zen2_EPYC-7452.yml"))
    assert code == 2 and out == ""
    assert "the store has no predictions for machine file" in err
    assert "(it has predictions of abe65fbbe563)" in err
    assert len(_models(copy)) == len(before)
