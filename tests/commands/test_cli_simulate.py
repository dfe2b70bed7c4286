"""simulate from the command line: the small MPI scenario's fastest variants run by SMPI on the fat tree to 4 ranks beside their predictions (progress, table, the JSON report --scaling draws), and each bad request refused with exit code 2, one line and no store written."""

from __future__ import annotations

import json
import shutil

import pytest

from scaling_support import FAT_TREE, SCENARIO, cache_at, refusal, run_cli

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.pipeline.scaling_documents import read_scaling

NO_MPI = PROJECT_ROOT / "tests" / "data" / "predict" / "small.scenario.yaml"
FLAT16 = PROJECT_ROOT / "tests" / "data" / "platforms" / "flat-16.xml"
PART = "fat-tree-100g"


@pytest.fixture(scope="module")
def simulated(simgrid, scaling_run, tmp_path_factory):
    """simulate to 4 ranks on a copy of the predict --scaling store, as JSON, then as text."""
    folder = tmp_path_factory.mktemp("simulate")
    db = folder / "store.h5"
    shutil.copy(scaling_run.db, db)
    argv = ("simulate", SCENARIO, "--platform", FAT_TREE, "--ranks-max", 4, "--db", db)
    with cache_at(scaling_run.cache):
        as_json = run_cli(*argv, "--json")
        as_text = run_cli(*argv)
    for code, _, err in (as_json, as_text):
        assert code == 0, err
    document = folder / "simulated.json"
    document.write_text(as_json[1])
    return as_json, as_text, document


@pytest.mark.slow
def test_the_json_is_a_scaling_document_report_reads(simulated):
    (_, out, err), _, path = simulated
    document, = read_scaling([str(path)])
    assert set(document) == {"scenario", "machine", "platforms"}
    part = document["platforms"][PART]
    assert part["platform"] == str(FAT_TREE)
    assert part["note"].startswith(f"exchanges on platform {FAT_TREE} (256 hosts, FAT_TREE)")
    ranks = sorted({p["ranks"] for p in part["points"]})
    assert ranks == [1, 2, 4]
    assert part["failed"] == 0 and part["step_within_20"] == part["step_compared"] == len(
        part["points"])
    for point in part["points"]:
        assert point["variant"].startswith("F-mpi") and point["n"] == 2400
        assert abs(point["predicted_s"] / point["simulated_s"] - 1) <= 0.20
    progress = [line for line in err.splitlines() if line.startswith("  Lorenz96 n=2400 P=")]
    assert len(progress) == len(part["points"])         # progress on stderr, one line a run


@pytest.mark.slow
def test_the_text_shows_progress_then_the_table(simulated):
    (_, out, _), (_, text, _), _ = simulated
    points = json.loads(out)["platforms"][PART]["points"]
    lines = text.splitlines()
    progress = [line for line in lines if line.startswith("  Lorenz96 n=2400 P=")]
    assert len(progress) == len(points)
    header = lines.index(f"radauIIA7 Lorenz96 n=2400 on {PART}: predicted (ECM compute and the "
                         "platform's exchanges) against SMPI's simulated step, s/step")
    assert lines[header + 1].split() == ["variant", "ranks", "predicted", "simulated", "error"]
    rows = [line.split() for line in lines[header + 2:header + 2 + len(points)]]
    assert sorted((row[0], int(row[1])) for row in rows) == sorted(
        (p["variant"], p["ranks"]) for p in points)
    assert all(row[4].endswith("%") for row in rows)
    assert any(line.startswith("step within 20% in ") for line in lines)
    assert lines[-1].startswith(f"exchanges on platform {FAT_TREE}")


@pytest.mark.slow
def test_a_named_variant_alone_is_simulated(simgrid, scaling_run, tmp_path):
    db = tmp_path / "store.h5"
    shutil.copy(scaling_run.db, db)
    variant = "F-mpi_RHS_LC_predictor_jil_RHS_LC_ijl_RHS_Approx_Update_ji"
    with cache_at(scaling_run.cache):
        code, out, err = run_cli("simulate", SCENARIO, "--platform", FAT_TREE, "--ranks-max", 2,
                                 "--variant", variant, "--json", "--db", db)
    assert code == 0, err
    points = json.loads(out)["platforms"][PART]["points"]
    assert [(p["variant"], p["ranks"], p["status"]) for p in points] == [
        (variant, 1, "ok"), (variant, 2, "ok")]


# ---- bad requests: exit code 2, one message, no store written ------------------------------------

@pytest.fixture
def refused(tmp_path):
    return refusal(tmp_path, "simulate")


def test_a_platform_that_is_not_xml_is_refused_with_file_and_line(refused, tmp_path):
    bad = tmp_path / "platform.yaml"
    bad.write_text("cluster: fat-tree\n")
    err = refused(SCENARIO, "--platform", bad, "--ranks-max", 4)
    assert f"platform file {bad}, line 1: not XML" in err


def test_a_platform_simgrid_cannot_load_is_refused_in_its_words(simgrid, refused, tmp_path):
    bad = tmp_path / "colour.xml"
    bad.write_text(FLAT16.read_text().replace('lat="1us"', 'lat="1us" colour="red"'))
    err = refused(SCENARIO, "--platform", bad, "--ranks-max", 4)
    assert f"platform file {bad}, line 5: " in err and "Bad attribute `colour'" in err


def test_more_ranks_than_hosts_are_refused(simgrid, refused):
    err = refused(SCENARIO, "--platform", FLAT16, "--ranks-max", 32)
    assert (f"{FLAT16}: --ranks-max 32 asks for 32 ranks, the platform has 16 hosts (one rank "
            "per host)") in err


def test_a_variant_not_in_the_pool_is_refused(refused):
    err = refused(SCENARIO, "--platform", FLAT16, "--ranks-max", 4, "--variant", "Z-mpi_nothing")
    assert "--variant: unknown variant id(s) Z-mpi_nothing in scenario scaling" in err


def test_a_scenario_without_mpi_skeletons_is_refused(refused):
    err = refused(NO_MPI, "--platform", FLAT16, "--ranks-max", 4)
    assert f"simulate: scenario small ({NO_MPI}) has no MPI skeleton" in err


@pytest.mark.parametrize("option", ["--ranks-max", "--best", "--steps"])
def test_counts_below_one_are_refused(refused, option):
    argv = {"--ranks-max": 4, "--best": 1, "--steps": 10, option: 0}
    err = refused(SCENARIO, "--platform", FLAT16, *[x for kv in argv.items() for x in kv])
    assert f"{option} 0: expected a whole number of at least 1" in err


def test_more_ranks_than_components_are_refused(refused):
    err = refused(SCENARIO, "--platform", FLAT16, "--ranks-max", 8, "-n", 6)
    assert "IVP Lorenz96 at n = 6 has fewer components than --ranks-max 8 ranks" in err
