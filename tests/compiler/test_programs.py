"""Native benchmark programs: a failing, garbled or hanging program is an error; the team size reaches it."""

from __future__ import annotations

import pytest

from hybridtune.compiler.programs import build_program, run_json
from hybridtune.errors import HybridtuneError


def _program(tmp_path, monkeypatch, body: str):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path))
    includes = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
    source = includes + "int main(void) {" + body + "}\n"
    return build_program("fake_bench", source)


def test_exit_status_timeout_and_bad_json_are_errors(monkeypatch, tmp_path):
    failing = _program(tmp_path, monkeypatch, 'fputs("no memory here", stderr); return 4;')
    with pytest.raises(HybridtuneError, match="exit status 4.*no memory here"):
        run_json(failing, [], 1, 10)
    garbled = _program(tmp_path, monkeypatch, 'puts("{\\"threads\\": 1,"); return 0;')
    with pytest.raises(HybridtuneError, match="no valid JSON"):
        run_json(garbled, [], 1, 10)
    slow = _program(tmp_path, monkeypatch, "sleep(20); return 0;")
    with pytest.raises(HybridtuneError, match="timed out after 0.3 s"):
        run_json(slow, [], 1, 0.3)
    echo = _program(tmp_path, monkeypatch,
                    'printf("{\\"threads\\": \\"%s\\"}\\n", getenv("OMP_NUM_THREADS")); return 0;')
    assert run_json(echo, [], 3, 10) == {"threads": "3"}
