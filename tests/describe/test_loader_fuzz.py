"""Property: random mutations of valid description files end in a DescriptionError or a record, never a traceback."""

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.errors import DescriptionError
from tests_support import SHARED_METHODS

SOURCES = {
    "method": SHARED_METHODS / "radauIIA7.ode",
    "ivp": PROJECT_ROOT / "scenarios/ivps/Heat2D.ivp.yaml",
    "ivp2": PROJECT_ROOT / "scenarios/ivps/Medakzo.ivp.yaml",
    "kernel": PROJECT_ROOT / "scenarios/kernels/RHS_LC.kernel.yaml",
    "skeleton": PROJECT_ROOT / "scenarios/skeletons/C.skeleton.yaml",
    "scenario": PROJECT_ROOT / "scenarios/default.yaml",
}
PIECES = ["", " ", "\n", ":", "- ", "[", "]", "{", "}", "'", '"', "#", "%", "%in[", "j", "n",
          "-1", "0", "1e308", "1.5", "null", "true", "~", "&a", "*a", "!!python/object:os.system",
          "%LOOP_START", "%LOOP_END", "%COMP", "%KERNEL", "n / 0", "sqrt(", ")", "?", ";", "\t",
          "\x00", "\u00e9", "s", "m - 1", "first", "size", "code", "repeat", "stride"]


@st.composite
def mutations(draw, text):
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "swap", "replace_line"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        line = lines[i] if lines else ""
        if kind == "delete" and line:
            a = draw(st.integers(0, len(line)))
            b = draw(st.integers(a, len(line)))
            lines[i] = line[:a] + line[b:]
        elif kind == "insert":
            a = draw(st.integers(0, len(line)))
            lines[i] = line[:a] + draw(st.sampled_from(PIECES)) + line[a:]
        elif kind == "duplicate":
            lines.insert(i, line)
        elif kind == "swap" and len(lines) > 1:
            k = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[k] = lines[k], lines[i]
        elif kind == "replace_line":
            lines[i] = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=6)))
    return "\n".join(lines)


def _check(tmp_path, name, text):
    target = tmp_path / name
    target.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load(target)
    except DescriptionError as error:
        assert error.expected and str(target) in str(error)


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_mutated_files_fail_cleanly(kind, tmp_path_factory):
    source = SOURCES[kind]
    folder = tmp_path_factory.mktemp(kind)
    if kind == "scenario":   # its references resolve from the library; the file itself is mutated
        shutil.copy(source, folder / "base.yaml")
    text = source.read_text()
    name = source.name

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(mutations(text))
    def check(mutated):
        _check(folder, name, mutated)

    check()
