"""simulate_scaling and its parts called directly: which variants a request simulates, at which rank counts, and one real SMPI run of the small MPI scenario on the fat tree (predicted within 20% of the simulated step), with the agreement summary and the scaling document it makes."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from scaling_support import FAT_TREE, SCENARIO, cache_at, prediction

from hybridtune.describe.loader import load
from hybridtune.pipeline.scaling_documents import document_problem, simulation_document
from hybridtune.pipeline.simulated_scaling import (SimulatedPoint, SimulationRequest,
                                                   chosen_variants, ranked_pairs,
                                                   simulate_scaling)
from hybridtune.pipeline.smpi_agreement import agreement, best_picks, comm_errors, platform_part
from hybridtune.store import Store


def ranking(ranks: int, *predictions) -> SimpleNamespace:
    return SimpleNamespace(configuration=SimpleNamespace(ranks=ranks), predictions=predictions)


# A at 1 rank, then F from 2 ranks on; G fails at 2 ranks (ranked last, as failures are); B-mpi-nx
# is slower everywhere but the fastest of its form
RANKINGS = [ranking(1, prediction("A-mpi_x", 1, 1.0), prediction("F-mpi-nx_y", 1, 1.2),
                    prediction("B-mpi-nx_q", 1, 1.5)),
            ranking(2, prediction("F-mpi-nx_y", 2, 0.5), prediction("A-mpi_x", 2, 0.6),
                    prediction("B-mpi-nx_q", 2, 0.9), prediction("G-mpi_z", 2, 0.1, status="failed"))]


def test_the_request_runs_at_powers_of_two_or_the_rank_counts_named():
    assert SimulationRequest("p.xml", 64).ranks == [1, 2, 4, 8, 16, 32, 64]
    assert SimulationRequest("p.xml", 6).ranks == [1, 2, 4, 6]
    assert SimulationRequest("p.xml", 256, only=(256,)).ranks == [256]


def test_the_shortlist_is_the_fastest_ok_variants_at_each_rank_count():
    request = SimulationRequest("p.xml", 2, shortlist=1)
    assert chosen_variants(RANKINGS, request) == ["A-mpi_x", "F-mpi-nx_y"]
    assert chosen_variants(RANKINGS, SimulationRequest("p.xml", 2, shortlist=4)) == [
        "A-mpi_x", "F-mpi-nx_y", "B-mpi-nx_q"]        # the failed G is never chosen
    with_forms = SimulationRequest("p.xml", 2, shortlist=1, per_skeleton=True)
    assert chosen_variants(RANKINGS, with_forms) == ["A-mpi_x", "F-mpi-nx_y", "B-mpi-nx_q"]


def test_named_variants_are_taken_as_they_are():
    request = SimulationRequest("p.xml", 2, variants=("B-mpi-nx_q",), per_skeleton=True)
    assert chosen_variants(RANKINGS, request) == ["B-mpi-nx_q"]


def test_each_chosen_variant_is_paired_with_its_prediction_where_it_runs():
    pairs = [(config.ranks, p.id, p.predicted_s)
             for config, p in ranked_pairs(RANKINGS, ["F-mpi-nx_y", "G-mpi_z"])]
    assert pairs == [(1, "F-mpi-nx_y", 1.2), (2, "F-mpi-nx_y", 0.5)]


def point(variant: str, ranks: int, predicted: float, simulated: float, comm: float = 0.0,
          injected: float | None = None, status: str = "ok") -> SimulatedPoint:
    injected = predicted - comm if injected is None else injected
    return SimulatedPoint("radauIIA7", "Lorenz96", 2400, ranks, variant, predicted, comm,
                          injected, simulated, 0.1, 1000, status)


def test_the_agreement_of_hand_made_points():
    points = [point("A", 1, 1.0, 1.0), point("B", 1, 1.1, 1.05),
              point("A", 2, 0.65, 0.5, comm=0.15, injected=0.5),   # SMPI: no communication
              point("B", 2, 0.55, 0.6, comm=0.05, injected=0.5),   # 0.05 against SMPI's 0.1
              point("C", 2, 0.4, None, status="failed")]
    assert points[1].error == pytest.approx(1.1 / 1.05 - 1)
    assert points[4].error is None
    assert comm_errors(points) == [pytest.approx(0.5)]      # A's simulated comm is 0: left out
    picks = best_picks(points)
    assert [(p["ranks"], p["analytic"], p["smpi"], p["same"]) for p in picks] == [
        (1, "A", "A", True), (2, "B", "A", False)]
    assert picks[1]["analytic_pick_slower_by"] == pytest.approx(0.2)
    summary = agreement(points)
    assert (summary["failed"], summary["comm_compared"], summary["comm_within_20"]) == (1, 1, 0)
    assert (summary["step_compared"], summary["step_within_20"]) == (4, 3)
    assert (summary["same_best"], summary["best_compared"]) == (1, 2)


def test_a_simulation_document_holds_its_parts_and_is_refused_when_malformed():
    part = platform_part("fat-tree-100g.xml", "note", [point("A", 1, 1.0, 1.0)], 2.0)
    document = simulation_document({"fat-tree-100g": part}, scenario="s.yaml")
    assert document_problem(document) == ""
    assert document["scenario"] == "s.yaml" and document["platforms"]["fat-tree-100g"] is part
    with pytest.raises(ValueError, match="'points' each have ivp, n, ranks"):
        simulation_document({"fat-tree-100g": {"points": [{"ivp": "Lorenz96"}]}})


@pytest.fixture(scope="module")
def simulated(simgrid, scaling_run, tmp_path_factory):
    """The variant predicted fastest at each of 1, 2 and 4 ranks of the fat tree, simulated."""
    db = tmp_path_factory.mktemp("simulated") / "store.h5"
    shutil.copy(scaling_run.db, db)
    scenario = load(SCENARIO, "scenario")
    seen = []
    with cache_at(scaling_run.cache), Store.open(db, "a", run={"command": "test"}) as store:
        points, note = simulate_scaling(scenario, SimulationRequest(str(FAT_TREE), 4, shortlist=1),
                                        store, seen.append)
    return points, note, seen


@pytest.mark.slow
def test_the_fastest_variants_run_by_smpi_within_20_percent_of_their_predictions(simulated):
    points, note, seen = simulated
    assert list(points) == seen
    assert note.startswith(f"exchanges on platform {FAT_TREE} (256 hosts, FAT_TREE)")
    variants = {p.variant for p in points}
    assert variants and all(v.startswith("F-mpi") for v in variants)
    for variant in variants:
        assert sorted(p.ranks for p in points if p.variant == variant) == [1, 2, 4]
    for p in points:
        assert p.status == "ok", p.message
        assert (p.method, p.ivp, p.n) == ("radauIIA7", "Lorenz96", 2400)
        assert abs(p.error) <= 0.20, p
        assert p.injected_s == pytest.approx(p.predicted_s - p.predicted_comm_s)
        assert p.wall_s > 0 and p.max_rss_bytes > 0
    one = [p for p in points if p.ranks == 1]
    assert all(p.simulated_comm_s == pytest.approx(0.0, abs=1e-7) for p in one)


@pytest.mark.slow
def test_the_real_points_make_a_document_report_can_draw(simulated):
    from hybridtune.report.scaling_plots import scaling_inputs
    points, note, _ = simulated
    document = simulation_document({"fat-tree-100g": platform_part(str(FAT_TREE), note, points,
                                                                   1.0)})
    studies, drawn = scaling_inputs([document])
    assert studies == [] and len(drawn) == len(points)
    assert document["platforms"]["fat-tree-100g"]["step_within_20"] == len(points)
