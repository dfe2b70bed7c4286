"""jobs/bench_scaling.py is a thin driver: it runs with the installed package (no sys.path edits), refuses an unknown part before it touches anything, and leaves the analysis to the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "jobs" / "bench_scaling.py"


def test_an_unknown_part_is_refused_before_anything_runs(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--parts", "platforms,everything"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert ("--parts platforms,everything: unknown everything; expected some of platforms, "
            "two_ranks, pmnf, big") in result.stderr


def test_the_script_holds_options_and_calls_only():
    text = SCRIPT.read_text()
    assert "sys.path" not in text
    assert len(text.splitlines()) <= 100
    for package_part in ("simulated_platforms", "two_rank_check", "pmnf_agreement",
                         "largest_simulation"):
        assert package_part in text
