"""store upgrade and store merge from the command line: summaries, refusals with exit 2, nothing written."""

from __future__ import annotations

import shutil

import pytest

from hybridtune.commands.main import main
from hybridtune.store import SCHEMA_VERSION, Store

pytestmark = pytest.mark.slow


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_merge_two_job_stores_keeps_every_run_and_each_prediction_once(capsys, tune_store,
                                                                       tmp_path):
    other = tmp_path / "other.h5"
    shutil.copy(tune_store, other)
    merged = tmp_path / "merged.h5"
    code, out, err = run(capsys, "store", "merge", str(tune_store), str(other), "-o", str(merged))
    assert code == 0, err
    assert f"wrote {merged} from 2 stores" in out and "duplicates" in out
    with Store.open(tune_store, "r") as one, Store.open(merged, "r") as both:
        assert both.rows("variant_predictions") == one.rows("variant_predictions")
        assert both.rows("runs") == one.rows("runs") + 1     # the merge's own run
        assert "store merge" in set(both.frame("runs")["command"])


def test_store_commands_refuse_with_one_line_and_write_nothing(capsys, tune_store, tmp_path):
    target = tmp_path / "new.h5"
    code, out, err = run(capsys, "store", "upgrade", str(tune_store), "-o", str(target))
    assert code == 2 and f"already at schema version {SCHEMA_VERSION}" in err
    assert not target.exists()
    code, out, err = run(capsys, "store", "merge", str(tune_store), str(tmp_path / "none.h5"),
                         "-o", str(target))
    assert code == 2 and err.startswith("error: ") and not target.exists()
    code, out, err = run(capsys, "store", "merge", str(tune_store), "-o", str(tune_store))
    assert code == 2 and "exists" in err
