"""The package's layers and adapter boundaries, as declared in pyproject.toml, hold (import-linter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT


def test_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout and "KEPT" in result.stdout
