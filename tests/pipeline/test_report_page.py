"""The report page assembled in the pipeline: what a store too small to evaluate draws, an empty store, the folder."""

from __future__ import annotations

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from hybridtune.pipeline.report_page import PAGE, build, check_output, write_store_report
from hybridtune.pipeline.store_frames import read_frames
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
TABLES = ("runs", "measurements", "variant_predictions")


def one_ivp_store(path):
    """The fixture's predictions and measurements of Wave1D only."""
    with Store.open(FIXTURE, "r") as store:
        frames = {table: store.frame(table) for table in TABLES[1:]}
    with Store.open(path, "a", run={"command": "test", "host": "testhost"}) as store:
        for table, frame in frames.items():
            store.append_many(table, frame[frame["ivp"] == "Wave1D"].to_dict("records"))
    return path


def test_a_store_of_one_ivp_draws_its_measurements_and_says_why_not_the_rest(tmp_path):
    content = build(read_frames(str(one_ivp_store(tmp_path / "small.h5")), TABLES))
    assert content["evaluation"] is None and "1 IVP(s)" in content["why"]
    assert [plot.file for plot in content["plots"]] == ["time_per_component.png",
                                                        "ecm_breakdown.png"]
    assert [item.title for item in content["missing"]] == [
        "Predicted against measured", "Ranking with uncertainty", "Best-found curves", "Speedup"]
    assert content["hardware"] and content["counts"]


def test_an_empty_store_is_refused_unless_scaling_curves_are_drawn(tmp_path):
    path = tmp_path / "empty.h5"
    with Store.open(path, "a", run={"command": "test"}):
        pass
    frames = read_frames(str(path), TABLES)
    with pytest.raises(RequestError, match="nothing to report"):
        build(frames, str(path))
    content = build(frames, str(path), scaling_only=True)
    assert content["plots"] == [] and "only the scaling curves are drawn" in content["notes"][0]


def test_the_report_folder_is_new_empty_or_a_previous_report(tmp_path):
    assert check_output(str(tmp_path / "new")) == tmp_path / "new"
    (tmp_path / "file").write_text("x")
    with pytest.raises(RequestError, match="expected a folder, found a file"):
        check_output(str(tmp_path / "file"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(RequestError, match="holds no previous report"):
        check_output(str(tmp_path / "other"))
    (tmp_path / "other" / PAGE).write_text("old report")
    assert check_output(str(tmp_path / "other")) == tmp_path / "other"


def test_a_store_report_is_written_whole(tmp_path):
    report = write_store_report(str(one_ivp_store(tmp_path / "small.h5")),
                                str(tmp_path / "report"), [])
    assert report.page == tmp_path / "report" / PAGE and report.page.is_file()
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == sorted(
        [PAGE] + [plot.file for plot in report.plots])
