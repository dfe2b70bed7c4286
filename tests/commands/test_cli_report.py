"""hybridtune report: the page and its plots from the learning fixture, a store too small to evaluate, a previous report replaced, and bad input refused with nothing written."""

from __future__ import annotations

import re
import shutil

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.commands.main import main
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
PNG = b"\x89PNG\r\n\x1a\n"
STRATEGIES = ("BestVariant", "RunAll", "preselect:5", "preselect:10", "hybrid")


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "fixture.h5"
    shutil.copy(FIXTURE, path)
    return path


def pngs(folder) -> list:
    """The PNG files of a report folder, each checked to be a non-trivial PNG matplotlib wrote."""
    files = sorted(folder.glob("*.png"))
    for file in files:
        data = file.read_bytes()
        assert data[:8] == PNG and b"Matplotlib" in data[:4000] and len(data) > 10_000, file
    return files


def one_ivp_store(source, path):
    """A copy of source's predictions and measurements of one IVP only."""
    with Store.open(source, "r") as store:
        predictions = store.frame("variant_predictions")
        measurements = store.frame("measurements")
    with Store.open(path, "a", run={"command": "test", "host": "testhost"}) as store:
        for table, frame in (("variant_predictions", predictions), ("measurements", measurements)):
            store.append_many(table, frame[frame["ivp"] == "Wave1D"].to_dict("records"))


@pytest.mark.slow
def test_report_of_the_fixture(store, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", "--db", str(store), "-o", str(out)]) == 0
    assert "index.html" in capsys.readouterr().out
    text = (out / "index.html").read_text()
    files = pngs(out)
    assert {f.name for f in files} == {"predicted_vs_measured.png", "ranking.png",
                                       "best_found.png", "time_per_component.png",
                                       "ecm_breakdown.png"}
    assert sorted(re.findall(r'<img src="([^"]+)"', text)) == sorted(f.name for f in files)
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.html"] + [f.name for f in files])
    for name in STRATEGIES:
        assert f"<td>{name}</td>" in text
    assert re.search(r"<td>top_k:\d+</td>", text) and re.search(r"<td>random:\d+</td>", text)
    # replayed under the shipped noise model (the fixture holds one pass), with hybrid's reliability
    assert "the store holds one pass: drawn from the shipped ground truth&#x27;s noise model" in text and "over 5 seeds" in text
    assert "<h2>Hybrid's chances</h2>" in text
    for ivp in ("Cusp", "InverterChain", "Medakzo", "Wave1D"):
        assert f"<tr><td>{ivp}</td>" in text                      # the accuracy table
    assert str(store) in text and "<td>tune</td>" in text and "Intel" in text
    assert "one thread count only" in text                       # no speedup, said in words
    assert "Offline model per size regime" in text and "<tr><td>L2</td>" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixture.h5", "report"]

    # a second run replaces the previous report whole and leaves nothing beside it
    (out / "stale.png").write_bytes(b"old")
    assert main(["report", "--db", str(store), "-o", str(out)]) == 0
    assert not (out / "stale.png").exists() and len(pngs(out)) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fixture.h5", "report"]


def test_store_of_one_ivp_gets_the_plots_without_evaluation(tmp_path, capsys):
    small = tmp_path / "small.h5"
    one_ivp_store(FIXTURE, small)
    out = tmp_path / "report"
    assert main(["report", "--db", str(small), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not drawn: Predicted against measured" in printed
    text = (out / "index.html").read_text()
    assert {f.name for f in pngs(out)} == {"time_per_component.png", "ecm_breakdown.png"}
    assert "Not evaluated: the store&#x27;s measurements cover 1 IVP(s)" in text
    assert text.count("Not drawn: no evaluation") == 3
    assert "<h2>Strategies</h2>" not in text and "testhost" in text


@pytest.mark.parametrize("case", ["missing store", "store is a folder", "output is a file",
                                  "foreign folder", "no parent folder"])
def test_bad_input_exits_2_and_writes_nothing(store, tmp_path, capsys, case):
    out = tmp_path / "report"
    db = store
    if case == "missing store":
        db = tmp_path / "nothing.h5"
    elif case == "store is a folder":
        db = tmp_path / "folder.h5"
        db.mkdir()
    elif case == "output is a file":
        out.write_text("mine")
    elif case == "no parent folder":
        out = tmp_path / "missing" / "report"
    else:
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["report", "--db", str(db), "-o", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    if case == "output is a file":
        assert out.read_text() == "mine"


def test_a_failed_run_keeps_the_previous_report_and_leaves_nothing(tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    small = tmp_path / "small.h5"
    one_ivp_store(FIXTURE, small)
    out = tmp_path / "report"
    assert main(["report", "--db", str(small), "-o", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(args)
        if len(calls) > 1:
            raise OSError("disk full")
        return saved(self, *args, **kwargs)

    saved = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", failing)
    with pytest.raises(OSError, match="disk full"):
        main(["report", "--db", str(small), "-o", str(out)])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "small.h5"]
