"""The store benchmark job runs at a small size: every bulk-appended row reads back, and it reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_store_benchmark_reads_back_every_row_and_writes_its_report(tmp_path):
    output = tmp_path / "bench" / "store.json"
    done = subprocess.run([sys.executable, str(ROOT / "jobs" / "bench_store.py"), "--rows", "2500",
                           "--repeats", "2", "--output", str(output)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(output.read_text())
    assert report["rows"] == 2500 and report["repeats"] == 2
    assert report["rows_read"] == 4 * 2500 + 2
    assert len(report["append_s"]) == len(report["read_s"]) == 2
    assert min(report["append_s"]) <= report["append_s_median"] <= max(report["append_s"])
    assert all(t > 0 for t in report["append_s"] + report["read_s"])
    assert [p.name for p in output.parent.iterdir()] == ["store.json"]


def test_store_benchmark_refuses_bad_sizes(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "jobs" / "bench_store.py"), "--rows", "0",
                           "--output", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert done.returncode == 2 and "--rows and --repeats must be at least 1" in done.stderr
    assert not (tmp_path / "x.json").exists()
