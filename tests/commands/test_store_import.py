"""`store import`: a tuned library's report lines (written by a real run of the library) taken into the store; malformed, foreign, false and repeated lines refused or skipped with nothing written; the rows used apart from tuning's own timings where they must be."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from hybridtune.commands.main import main
from hybridtune.learn.table import best_measurements
from hybridtune.measure.provenance import hardware_identity
from hybridtune.pipeline.report_page import production_runs
from hybridtune.store import Store, merge_stores
from hybridtune.strategies.noise import pass_ratios
from export_support import GROUND_TRUTH, exported, linked
PROGRAM = r"""
#include <stdlib.h>
#include "wave.h"
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int steps = atoi(argv[2]);
    double h = wave_stable_step(n);
    wave_ctx *c = wave_create_options(n, 1, WAVE_ADAPT);
    if (!c) return 1;
    wave_initial_values(c);
    for (int k = 0; k < steps; ++k) wave_step(c, k * h, h);
    wave_destroy(c);
    return 0;
}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The lines a run of Wave1D's tuned library (two candidates, adaptive) wrote, n = 600."""
    root = tmp_path_factory.mktemp("report")
    program = linked(root, PROGRAM, exported(root, "Wave1D", "wave", "--candidates", "2"))
    path = root / "report.jsonl"
    subprocess.run([str(program), "600", "100"], check=True,
                   env={**os.environ, "HYBRIDTUNE_REPORT": str(path)})
    return path


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store.h5"
    shutil.copy(GROUND_TRUTH, path)
    return path


def _rows(path) -> tuple[int, int]:
    with Store.open(path, "r") as opened:
        return opened.rows("measurements"), opened.rows("runs")


def _production(path):
    with Store.open(path, "r") as opened:
        frame = opened.frame("measurements")
    return frame[frame["timing"] == "production"]


def test_the_library_reports_this_host_as_hybridtune_identifies_it(report):
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(lines) == 2 and sum(line["kept"] for line in lines) == 1
    assert {line["hardware_id"] for line in lines} == {hardware_identity()["hardware_id"]}
    assert lines[0]["compiler_flags"].startswith("-O3")


def test_import_takes_the_lines_once(report, store, capsys):
    before = _rows(store)
    assert main(["store", "import", str(report), "--db", str(store)]) == 0
    assert "2 production measurement(s) imported from 2 line(s)" in capsys.readouterr().out
    rows = _production(store)
    assert len(rows) == 2 and set(rows["hardware_id"]) == {hardware_identity()["hardware_id"]}
    assert all(rows["median_s"] > 0) and all(rows["status"] == "ok")
    assert _rows(store) == (before[0] + 2, before[1] + 1)
    assert main(["store", "import", str(report), "--db", str(store)]) == 0
    assert "2 already in the store" in capsys.readouterr().out
    assert _rows(store) == (before[0] + 2, before[1] + 1)       # no row, not even a run


def _lines(report) -> list[dict]:
    return [json.loads(line) for line in report.read_text().splitlines()]


@pytest.mark.parametrize("kind, change, said", [
    ("malformed", lambda line: "not json {", "malformed; the first: "),
    ("malformed", lambda line: json.dumps({**line, "median_s": -1.0}),
     "median_s: expected seconds > 0, got -1.0"),
    ("malformed", lambda line: json.dumps({k: v for k, v in line.items() if k != "n"}),
     "n: expected a whole number >= 1, got None"),
    ("foreign", lambda line: json.dumps({**line, "code_sha256": "0" * 64}),
     "of code the store never measured"),
    ("host", lambda line: json.dumps({**line, "hardware_id": "0" * 24}),
     "run on other hardware than they claim"),
])
def test_refused_lines_write_nothing(report, store, tmp_path, capsys, kind, change, said):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(change(line) for line in _lines(report)) + "\n")
    before = _rows(store)
    assert main(["store", "import", str(bad), "--db", str(store)]) == 2
    err = capsys.readouterr().err
    assert f"error: 2 line(s) refused" in err and said in err and f"{bad}:1" in err
    assert _rows(store) == before


def test_good_lines_beside_bad_ones_are_imported_and_the_exit_says_so(report, store, tmp_path,
                                                                       capsys):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(report.read_text() + "{\n")
    assert main(["store", "import", str(mixed), "--db", str(store)]) == 2
    assert "1 line(s) refused, malformed" in capsys.readouterr().err
    assert len(_production(store)) == 2


def test_a_missing_file_or_store_is_refused(report, tmp_path, capsys):
    assert main(["store", "import", str(tmp_path / "none.jsonl"), "--db",
                 str(tmp_path / "s.h5")]) == 2
    assert "cannot read the report" in capsys.readouterr().err
    assert main(["store", "import", str(report), "--db", str(tmp_path / "s.h5")]) == 2
    assert "no such store" in capsys.readouterr().err
    assert not (tmp_path / "s.h5").exists()


def test_production_rows_are_passes_of_their_hardware_not_tuning_timings(report, store, tmp_path):
    assert main(["store", "import", str(report), "--db", str(store)]) == 0
    with Store.open(store, "r") as opened:
        frame = opened.frame("measurements")
    mine = hardware_identity()["hardware_id"]
    assert set(best_measurements(frame, mine)["timing"]) == {"production"}
    assert pass_ratios(frame, mine).empty                # not a pass of tuning's noise
    shown = production_runs(frame)
    assert len(shown) == 2 and all(row["tuned_s"] is None for row in shown)   # other hardware
    merged = tmp_path / "merged.h5"
    merge_stores([str(store), str(store)], str(merged), {"argv": []})
    assert len(_production(merged)) == 2
