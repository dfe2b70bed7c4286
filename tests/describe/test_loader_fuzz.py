"""Property: mutated description files, and numeric extremes in every expression position, end in a
DescriptionError or a record, never a traceback."""

import shutil
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridtune.describe.ivp import IVP as IVP_RECORD
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.describe.scenario import Scenario
from hybridtune.describe.skeleton import Skeleton
from hybridtune.errors import DescriptionError, HybridtuneError
from hybridtune.reference.rhs import initial_values, right_hand_side
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


# --- numeric extremes in every expression position ----------------------------------------

INTEGER_BEYOND_FLOAT = "1" + "0" * 400
DIGITS_BEYOND_PYTHON = "9" * 5000      # more digits than Python converts to int by default
NUMBERS = ["0", "1", "1e309", "1e-400", "1e308", "4.9e-324", "1180591620717411303424",   # 2**70
           "99999999999999999999999", "9223372036854775807", "9223372036854775808",
           INTEGER_BEYOND_FLOAT, DIGITS_BEYOND_PYTHON, "010", "0.0"]
QUOTIENTS = ["1/0", "1%0", "1.0/0", "0.0/0", "n/0", "n%0", "0/0"]
ATOMS = NUMBERS + QUOTIENTS + ["n", "-1"]


def _nested(pair) -> str:
    depth, inner = pair
    return "(" * depth + inner + ")" * depth


def _grow(inner):
    """Wider and deeper expressions, without spaces (loop bounds are split at spaces)."""
    return st.one_of(
        st.tuples(inner, st.sampled_from("+-*/%"), inner).map("".join),
        st.tuples(st.integers(1, 80), inner).map(_nested),
        st.tuples(st.integers(1, 80), inner).map(lambda pair: "-" * pair[0] + pair[1]),
        st.tuples(st.sampled_from(["exp", "sqrt", "log", "floor"]), inner).map(
            lambda pair: f"{pair[0]}({pair[1]})"),
    )


EXPRESSIONS = st.recursive(st.sampled_from(ATOMS), _grow, max_leaves=4)
# YAML-level integers (sizes, counts) take a plain number, not an expression
YAML_NUMBERS = st.sampled_from(NUMBERS + ["-1", "1.5", ".inf", "-.inf", ".nan"])

IVP = """
name: Extreme
n: {min: $min, multiple_of: $multiple_of}
quantities:
  N: "$quantity"
constants:
  - "double dw = $constant"
stable_step: "$stable_step"
components:
  - first: "$first"
    size: "$size"
    repeat: "$repeat"
    stride: "$stride"
    code: "%in[$index] + $code"
  - first: 1
    size: 1
    repeat: N
    stride: 2
    code: "-pow(1.0 + (j / 2) * dw, 2.0) * %in[j - 1]"
initial_values:
  - first: 0
    size: n
    code: "$initial"
"""
IVP_DEFAULTS = {"min": "2", "multiple_of": "2", "quantity": "n / 2", "constant": "1.0 / N",
                "stable_step": "0.5", "first": "0", "size": "1", "repeat": "N", "stride": "2",
                "index": "j + 1", "code": "0.0", "initial": "j % 2 == 0 ? 1.0 : 0.0"}

METHOD = """
stages: $stages
order: $order
corrector_steps: $corrector_steps
A: [["$a11", "$a12"], ["1 / 4 + sqrt(3) / 6", "1 / 4"]]
b: ["$b1", 0.5]
c: ["$c1", "1 / 2 + sqrt(3) / 6"]
"""
METHOD_DEFAULTS = {"stages": "2", "order": "4", "corrector_steps": "3", "a11": "1 / 4",
                   "a12": "1 / 4 - sqrt(3) / 6", "b1": "0.5", "c1": "1 / 2 - sqrt(3) / 6"}

KERNEL = """
datastructs:
  - double t
  - double h
  - double b[$dim]
  - double c[s]
  - double Y[s][n]
  - double F[s][n]
computations:
  C1: "F[l][j] = $value * %RHS"
  C2: "Y[l][j] += $value2 * b[l] * h"
rhs: {input: "Y[l]", time: "t + $time * c[l] * h"}
variants:
  - name: K_lj
    code: |
      %LOOP_START l $lower $upper
      %LOOP_START j $inner
      %COMP C1
      %COMP C2
      %LOOP_END j
      %LOOP_END l
  - name: K_jl
    code: |
      %LOOP j $indented
        %LOOP l s unroll
          %COMP C1
"""
KERNEL_DEFAULTS = {"dim": "s", "value": "1.0", "value2": "2.0", "time": "1.0", "lower": "0",
                   "upper": "s", "inner": "n", "indented": "n"}

SKELETON = """
code: |
  %KERNEL RHS_predictor
  %LOOP_START k $lower $upper
  %COM omp_barrier
  %KERNEL LC
  %LOOP_END k
  %LOOP i $indented
    %KERNEL RHS
"""
SKELETON_DEFAULTS = {"lower": "0", "upper": "m", "indented": "m-1"}

SCENARIO = """
methods: gauss4
ivps: [Wave1D]
skeletons: A
machine: ./Extreme.yml
n: $n
threads: $threads
"""
SCENARIO_DEFAULTS = {"n": "[1000]", "threads": "1"}

MACHINE = """
model name: Extreme
clock: $clock GHz
sockets: $sockets
cores per socket: 8
cacheline size: $cacheline B
FLOPs per cycle: {DP: {total: 16, FMA: 16, ADD: 8, MUL: 8}}
in-core model: {OSACA: SKX}
memory hierarchy:
- level: L1
  size per group: $size kB
  groups: 8
  cores per group: 1
- level: L2
  cache per group: {sets: $sets, ways: 16, cl_size: 64}
  size per group: ~
  groups: 8
  cores per group: 1
- level: MEM
  cores per group: 8
"""
MACHINE_DEFAULTS = {"clock": "3.0", "sockets": "1", "cacheline": "64", "size": "32.00",
                    "sets": "1024"}



def _each(keys, values) -> dict:
    """One position per placeholder, each taking the drawn values."""
    return {key: ({key: None}, values) for key in keys}


# kind -> (file name, template, defaults, {position: ({placeholder: None for the drawn value,
# or a fixed text}, values)})
EXTREME_CASES = {
    "ivp": ("Extreme.ivp.yaml", IVP, IVP_DEFAULTS, {
        **_each(("min", "multiple_of"), YAML_NUMBERS),
        **_each(("quantity", "constant", "stable_step", "first", "size", "repeat", "stride",
                 "index", "code", "initial"), EXPRESSIONS)}),
    "method": ("Extreme.method.yaml", METHOD, METHOD_DEFAULTS, {
        **_each(("stages", "order", "corrector_steps"), YAML_NUMBERS),
        **_each(("a11", "a12", "b1", "c1"), EXPRESSIONS),
        # a row that sums to its c reaches the order conditions
        "row": ({"a11": None, "a12": "0", "c1": None}, EXPRESSIONS)}),
    "kernel": ("Extreme.kernel.yaml", KERNEL, KERNEL_DEFAULTS,
               _each(KERNEL_DEFAULTS, EXPRESSIONS)),
    "skeleton": ("Extreme.skeleton.yaml", SKELETON, SKELETON_DEFAULTS,
                 _each(SKELETON_DEFAULTS, EXPRESSIONS)),
    "scenario": ("Extreme.scenario.yaml", SCENARIO, SCENARIO_DEFAULTS, {
        **_each(("n", "threads"), YAML_NUMBERS),
        **{position: ({"n": None}, YAML_NUMBERS.map(form.format)) for position, form in (
            ("n_list", "[{}]"), ("n_from", "{{from: {}, to: 100000, points: 3}}"),
            ("n_to", "{{from: 10, to: {}, points: 3}}"),
            ("points", "{{from: 10, to: 100000, points: {}}}"))}}),
    "machine": ("Extreme.yml", MACHINE, MACHINE_DEFAULTS, _each(MACHINE_DEFAULTS, YAML_NUMBERS)),
}


EXTREME_POSITIONS = [(kind, position) for kind, case in sorted(EXTREME_CASES.items())
                     for position in sorted(case[3])]


def extreme_files(kind: str, position: str):
    """Descriptions whose one expression position holds a numeric extreme."""
    _, template, defaults, positions = EXTREME_CASES[kind]
    fills, values = positions[position]
    return values.map(lambda value: string.Template(template).substitute(
        {**defaults, **{key: value if fixed is None else fixed for key, fixed in fills.items()}}))


def _use(record) -> None:
    """What commands evaluate right after loading: reference values, barrier counts, sizes."""
    if isinstance(record, IVP_RECORD):
        n = record.sizes.samples()[0]
        y = initial_values(record, n)
        right_hand_side(record, n)(0.0, y)
        record.step_size(n)
        record.block_facts(n)
    elif isinstance(record, Skeleton):
        record.barrier_formula()
    elif isinstance(record, Scenario):
        for ivp in record.ivps:
            record.sizes.for_ivp(ivp)


def _write_defaults(folder, kind: str):
    name, template, defaults, _ = EXTREME_CASES[kind]
    path = folder / name
    path.write_text(string.Template(template).substitute(defaults))
    return path


def test_the_extreme_templates_load_as_written(tmp_path):
    for kind in sorted(EXTREME_CASES, key=lambda k: k != "machine"):   # the scenario's first
        _use(load(_write_defaults(tmp_path, kind)))


@pytest.mark.parametrize("kind, position", EXTREME_POSITIONS)
def test_numeric_extremes_fail_cleanly(kind, position, tmp_path_factory):
    folder = tmp_path_factory.mktemp(kind)
    _write_defaults(folder, "machine")   # the scenario's machine; a small file parses quickly
    target = folder / EXTREME_CASES[kind][0]

    @settings(max_examples=25, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(extreme_files(kind, position))
    def check(text):
        target.write_text(text)
        try:
            record = load(target)
        except DescriptionError as error:
            assert error.expected and str(target) in str(error)
            return
        try:
            _use(record)
        except HybridtuneError:
            pass

    check()
