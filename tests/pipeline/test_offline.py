"""The offline stages end to end on a small scenario: cold, then warm from the store, then a failing machine."""

from __future__ import annotations

import os

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.pipeline.offline_stages import OfflineRequest, predict_offline, predict_scenario
from hybridtune.predict.features import FEATURE_SCHEMA
from hybridtune.describe.strategy import parse_strategy
from hybridtune.strategies.registry import shortlist
from hybridtune.store import Store
from tests_support import SHARED_MACHINES

SMALL = PROJECT_ROOT / "tests" / "data" / "predict" / "small.scenario.yaml"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    folder = tmp_path_factory.mktemp("offline")
    os.environ["HYBRIDTUNE_CACHE"] = str(folder / "cache")
    try:
        scenario = load(SMALL, "scenario")
        with Store.open(folder / "store.h5", "a", run={"command": "test"}) as store:
            first = predict_scenario(scenario, store=store)
        with Store.open(folder / "store.h5", "a", run={"command": "test"}) as store:
            second = predict_scenario(scenario, store=store)
            frames = {t: store.frame(t) for t in ("kernels", "kernel_predictions",
                                                  "variant_predictions", "prediction_sets")}
    finally:
        del os.environ["HYBRIDTUNE_CACHE"]
    return scenario, first, second, frames, folder


def test_cold_run_analyses_every_loop_once_and_ranks_the_pool(cold):
    scenario, first, _, frames, folder = cold
    assert first.analyses == first.loops > 0
    assert not first.failed_loops
    assert len(first.rankings) == 2 * 2                      # two sizes, two thread counts
    for ranking in first.rankings:
        ok = [p for p in ranking.predictions if p.status == "ok"]
        assert len(ok) == 32
        assert [p.rank for p in ok] == list(range(1, 33))
        assert all(a.predicted_s <= b.predicted_s for a, b in zip(ok, ok[1:]))
        best = ok[0]
        assert best.predicted_s == pytest.approx(sum(k["seconds"] for k in best.kernels)
                                                 + best.t_com_s)
        assert best.barriers == 1 + scenario.methods[0].corrector_steps        # skeleton F: m + 1
    assert len(frames["kernels"]) == first.loops
    assert set(frames["kernel_predictions"]["status"]) == {"ok"}
    assert (folder / "cache" / "kerncraft").is_dir()


def test_warm_run_reuses_every_prediction(cold):
    _, first, second, frames, _ = cold
    assert second.analyses == 0 and second.loops == first.loops
    for a, b in zip(first.rankings, second.rankings):
        assert [p.id for p in a.predictions] == [p.id for p in b.predictions]
        assert [p.predicted_s for p in a.predictions] == [p.predicted_s for p in b.predictions]
    # the same rankings are not stored twice: the warm run appended no variant predictions
    assert (first.new_rankings, second.new_rankings) == (4, 0)
    assert len(frames["variant_predictions"]) == 4 * 32 == frames["prediction_sets"]["variants"].sum()
    assert frames["prediction_sets"]["digest"].is_unique


def test_a_dry_run_request_ranks_from_the_store_and_writes_nothing(cold):
    scenario, _, second, frames, folder = cold
    with Store.open(folder / "store.h5", "r") as store:
        dry = predict_offline(OfflineRequest(scenario, dry_run=True), store)
        assert len(store.frame("variant_predictions")) == len(frames["variant_predictions"])
    assert dry.missing == dry.analyses == dry.new_rankings == 0 and dry.loops == second.loops
    assert [[(p.id, p.predicted_s) for p in r.predictions] for r in dry.rankings] == \
        [[(p.id, p.predicted_s) for p in r.predictions] for r in second.rankings]


def test_more_threads_predict_less_time_and_larger_n_more(cold):
    _, first, _, _, _ = cold
    best = {(r.configuration.n, r.configuration.threads): r.predictions[0].predicted_s
            for r in first.rankings}
    assert best[(6000, 2)] < best[(6000, 1)] < best[(600000, 1)]
    assert best[(600000, 2)] < best[(600000, 1)]


def test_shortlists(cold):
    scenario, first, _, _, _ = cold
    ranking = list(first.rankings[0].predictions)
    picked = shortlist(scenario.strategy, ranking)
    assert picked == shortlist(parse_strategy("preselect:10"), ranking)
    assert picked[0] is ranking[0] and picked == ranking[:len(picked)]
    assert all(p.predicted_s <= 1.1 * ranking[0].predicted_s for p in picked)
    assert ranking[len(picked)].predicted_s > 1.1 * ranking[0].predicted_s
    assert len(shortlist(parse_strategy("preselect:1000"), ranking)) == 32
    assert shortlist(parse_strategy("top_k:3"), ranking) == ranking[:3]
    assert shortlist(parse_strategy("run_all"), ranking) == ranking
    drawn = shortlist(parse_strategy("random:5:7"), ranking)
    assert len({p.id for p in drawn}) == 5 and drawn == shortlist(parse_strategy("random:5:7"),
                                                                  ranking[::-1])


def test_a_machine_kerncraft_cannot_use_marks_loops_failed_and_ranks_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    broken = tmp_path / "broken.yml"
    broken.write_text((SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
                      .replace("OSACA: SKX", "OSACA: NOSUCHARCH"))
    text = SMALL.read_text().replace("machine: SkylakeSP_Gold-6148", f"machine: {broken}")
    text = text.replace("skeletons: [F]", "skeletons: [F]\nn: [6000]").replace(
        "n: [6000, 600000]\n", "")
    scenario_path = tmp_path / "broken.scenario.yaml"
    scenario_path.write_text(text)
    scenario = load(scenario_path, "scenario")
    result = predict_scenario(scenario, threads=[1])
    assert result.failed_loops and result.analyses == result.loops
    for ranking in result.rankings:
        assert all(p.status == "failed" and p.rank == 0 and p.message for p in ranking.predictions)


def test_the_roofline_model_is_selectable_per_scenario(tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "roofline.scenario.yaml"
    path.write_text(SMALL.read_text().replace("name: small", "name: small\nmodel: Roofline")
                    .replace("skeletons: [F]", "skeletons: [F]\nkernels: [RHS_LC_predictor, "
                             "RHS_LC, RHS_Approx_Update]"))
    scenario = load(path, "scenario")
    assert scenario.model == "Roofline"
    with Store.open(tmp_path / "s.h5", "a", run={"command": "test"}) as store:
        result = predict_scenario(scenario, n=6000, threads=[1], store=store)
        models = set(store.frame("kernel_predictions")["model"])
    assert models == {"Roofline"} and not result.failed_loops
    [ranking] = result.rankings
    assert all(p.status == "ok" and p.predicted_s > 0 for p in ranking.predictions)


def test_a_file_built_for_native_is_named_where_it_is_not_this_host(tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    native = tmp_path / "native.yml"
    native.write_text((SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
                      .replace("-march=skylake-avx512 -D_POSIX_C_SOURCE=200809L -fopenmp -lm",
                               "-march=native -D_POSIX_C_SOURCE=200809L -fopenmp -lm"))
    path = tmp_path / "native.scenario.yaml"
    path.write_text(SMALL.read_text().replace("machine: SkylakeSP_Gold-6148", f"machine: {native}")
                    .replace("skeletons: [F]", "skeletons: [F]\nkernels: [RHS_LC_predictor, "
                             "RHS_LC, RHS_Approx_Update]"))
    scenario = load(path, "scenario")
    with Store.open(tmp_path / "s.h5", "a", run={"command": "test"}) as store:
        first = predict_scenario(scenario, n=6000, threads=[1], store=store)
        again = predict_scenario(scenario, n=6000, threads=[1], store=store)
    assert first.analyses > 0 and first.target_note.startswith(f"{first.analyses} kerncraft "
                                                              f"analyses built {native}'s loops")
    assert "-march=native" in first.target_note
    assert again.analyses == 0 and again.target_note == ""     # nothing was built this time


def test_each_stored_prediction_keeps_its_features(cold):
    frames = cold[3]
    predictions = frames["variant_predictions"]
    ok = predictions[predictions.predicted_s.notna()].to_dict("records")
    assert ok
    for row in ok:
        features = row["features"]
        assert features["feature_schema"] == FEATURE_SCHEMA
        assert features["predicted_s"] == pytest.approx(row["predicted_s"], rel=1e-4)
        kernels = sum(v for k, v in features.items() if k.startswith("tpl_") and "_T_" not in k)
        assert kernels == pytest.approx(row["predicted_s"] - row["t_com_s"], rel=1e-3)
        # one thread: a loop's cycles are its T_ECM, never less than its in-core time
        if row["threads"] == 1:
            assert 0 < features["ecm_T_comp_s"] <= kernels * (1 + 1e-3)
        assert all(level in features for level in ("ws_over_L1", "ws_over_L2", "ws_over_L3"))
        loops = [loop for kernel in row["breakdown"]["kernels"] for loop in kernel[4]]
        assert loops and all(level in ("L1", "L2", "L3", "MEM") for _, level in loops)
