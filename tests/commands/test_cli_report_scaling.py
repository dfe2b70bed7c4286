"""report --scaling from the command line: the curves of the predict --scaling run and a bench_scaling document drawn as scaling.png beside the store's plots, and a --scaling file that is not JSON, or not a scaling document, refused with exit code 2 naming it and no report folder written."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from scaling_support import run_cli

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.pipeline.report_page import read_scaling, scaling_plots
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
PNG = b"\x89PNG\r\n\x1a\n"
STORE_PLOTS = {"predicted_vs_measured.png", "ranking.png", "best_found.png",
               "time_per_component.png", "ecm_breakdown.png"}
VARIANT = "F-mpi-nx_RHS_LC_predictor_jil_RHS_LC_ijl_RHS_Approx_Update_ji"


def bench_document() -> dict:
    """A bench_scaling document: one simulated curve at the predicted size, one at a larger n,
    and a failed point that is left out."""
    def point(ranks, n, seconds, status="ok"):
        return {"method": "radauIIA7", "ivp": "Lorenz96", "n": n, "ranks": ranks,
                "variant": VARIANT, "predicted_s": seconds, "simulated_s": seconds,
                "status": status}
    return {"platforms": {"fat-tree-100g": {
        "platform": "data/platforms/fat-tree-100g.xml",
        "points": [point(2, 2400, 3.5e-5), point(4, 2400, 2.0e-5), point(8, 2400, 1.1e-5),
                   point(8, 19200, 6.0e-5), point(16, 2400, float("nan"), "timeout")]}}}


@pytest.fixture
def documents(scaling_run, tmp_path):
    """The predict --scaling JSON and the bench document, as files."""
    code, out, err = scaling_run.as_json
    assert code == 0, err
    predicted, simulated = tmp_path / "predicted.json", tmp_path / "bench.json"
    predicted.write_text(out)
    simulated.write_text(json.dumps(bench_document()))
    return predicted, simulated


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "fixture.h5"
    shutil.copy(FIXTURE, path)
    return path


@pytest.mark.slow
def test_the_scaling_figure_reads_both_documents(documents, store):
    """What report --scaling draws: one figure, a panel per (method, IVP, n) of the two
    documents."""
    with Store.open(store, "r") as opened:
        measurements = opened.frame("measurements")
    plots = scaling_plots(read_scaling([str(p) for p in documents]), measurements)
    plot, = plots
    assert plot.file == "scaling.png"
    assert [ax.get_title() for ax in plot.figure.axes] == ["radauIIA7 Lorenz96 n=2400",
                                                          "radauIIA7 Lorenz96 n=19200"]
    labels = [line.get_label() for line in plot.figure.axes[0].get_lines()]
    predicted = json.loads(documents[0].read_text())["studies"][0]
    shown = {predicted["best_strong"][0]["variant"], predicted["best_strong"][-1]["variant"]}
    assert sorted(labels[:-1]) == sorted(f"predicted {v}" for v in shown)
    assert labels[-1] == f"SMPI {VARIANT}"
    simulated = [line for line in plot.figure.axes[0].get_lines()
                 if line.get_label().startswith("SMPI")]
    assert list(simulated[0].get_xdata()) == [2, 4, 8]       # the timed-out point left out


@pytest.mark.slow
def test_report_with_scaling_writes_scaling_png_beside_the_others(documents, store, tmp_path):
    out = tmp_path / "report"
    code, stdout, err = run_cli("report", "--db", store, "-o", out,
                                "--scaling", documents[0], "--scaling", documents[1])
    assert code == 0, err
    assert stdout.splitlines()[0].endswith(", scaling.png")
    assert {p.name for p in out.glob("*.png")} == STORE_PLOTS | {"scaling.png"}
    data = (out / "scaling.png").read_bytes()
    assert data[:8] == PNG and b"Matplotlib" in data[:4000] and len(data) > 10_000
    text = (out / "index.html").read_text()
    assert "scaling.png" in re.findall(r'<img src="([^"]+)"', text)
    assert "Scaling: predicted, simulated, measured" in text


def test_documents_without_any_curve_draw_no_figure():
    assert scaling_plots([{"studies": []}, {"platforms": {}}], None) == []


# ---- bad --scaling files: exit code 2 naming the file, no report folder --------------------------

@pytest.fixture
def refused(store, tmp_path):
    out = tmp_path / "report"

    def _refused(scaling) -> str:
        code, stdout, err = run_cli("report", "--db", store, "-o", out, "--scaling", scaling)
        assert code == 2 and stdout == "", (code, stdout, err)
        assert err.startswith(f"error: --scaling {scaling}: ") and err.count("\n") == 1, err
        assert not out.exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report")]   # no staging
        return err
    return _refused


def test_a_scaling_file_that_is_not_json_is_refused(refused, tmp_path):
    bad = tmp_path / "scaling.yaml"
    bad.write_text("platforms:\n  fat-tree: {}\n")
    err = refused(bad)
    assert ("expected the JSON of `predict --scaling --json` or of jobs/bench_scaling.py "
            "(Expecting value: line 1 column 1 (char 0))") in err


def test_a_missing_scaling_file_is_refused(refused, tmp_path):
    err = refused(tmp_path / "absent.json")
    assert "No such file or directory" in err


@pytest.mark.parametrize("document", [{"plans": []}, {"machine": "Xeon"}, [], "studies"])
def test_json_without_studies_or_platforms_is_refused(refused, tmp_path, document):
    """The JSON of plan (plans), of something else, or no object at all."""
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(document))
    err = refused(bad)
    assert ("expected a JSON object with 'studies' (predict --scaling --json) or 'platforms' "
            "(bench_scaling)") in err


@pytest.mark.parametrize("document, expected", [
    ({"studies": None}, "expected 'studies' to be a list of studies, each with ivp, n, "
                        "best_strong, variants"),
    ({"studies": [{"ivp": "Lorenz96"}]}, "expected 'studies' to be a list of studies"),
    ({"platforms": []}, "expected 'platforms' to map each platform to an object whose 'points' "
                        "each have ivp, n, ranks, variant, status, simulated_s"),
    ({"platforms": {"fat-tree-100g": {"points": [{"ivp": "Lorenz96", "ranks": 2}]}}},
     "expected 'platforms' to map each platform"),
    ({"platforms": {"fat-tree-100g": {"points": {}}}}, "expected 'platforms' to map")])
def test_a_scaling_document_of_the_wrong_shape_is_refused(refused, tmp_path, document, expected):
    """Refused before the store is read, not failing with a traceback after its plots."""
    bad = tmp_path / "shape.json"
    bad.write_text(json.dumps(document))
    assert expected in refused(bad)


def test_a_refused_scaling_file_leaves_a_previous_report_as_it_was(store, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("the previous report")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = run_cli("report", "--db", store, "-o", out, "--scaling", bad)
    assert code == 2 and f"--scaling {bad}: " in err
    assert [p.name for p in out.iterdir()] == ["index.html"]
    assert (out / "index.html").read_text() == "the previous report"
