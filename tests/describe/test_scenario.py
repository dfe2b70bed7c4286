"""Scenarios: the default scenario loads; references, sizes and skeletons are checked across files."""

from pathlib import Path

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.errors import DescriptionError
from tests_support import expect_error

SCENARIO = """
methods: [radauIIA7]
ivps: [Cusp, IC]
skeletons: [A, C]
machine: host
n: [600, 6000]
threads: [1, 2]
"""


def test_default_scenario(default_scenario):
    assert [m.name for m in default_scenario.methods] == ["radauIIA7"]
    assert [i.name for i in default_scenario.ivps] == ["Cusp", "InverterChain", "Medakzo", "Wave1D"]
    assert [s.name for s in default_scenario.skeletons] == list("ABCDEFGH")
    assert len(default_scenario.templates) == 10
    assert default_scenario.threads == (1, 2)


def test_size_range_rounds_to_valid_n(write):
    text = SCENARIO.replace("n: [600, 6000]", "n: {from: 100, to: 10000, points: 3}")
    scenario = load(write("s.scenario.yaml", text))
    cusp, ic = scenario.ivps
    assert scenario.sizes.for_ivp(cusp) == (102, 1002, 10002)
    assert scenario.sizes.for_ivp(ic) == (100, 1000, 10000)


def test_paths_relative_to_the_scenario(write, tmp_path):
    (tmp_path / "my.skeleton.yaml").write_text(
        "code: |\n  %KERNEL RHS_predictor\n  %KERNEL ApproxUpdate\n")
    scenario = load(write("s.scenario.yaml", SCENARIO.replace("[A, C]", "[my.skeleton.yaml]")))
    assert scenario.skeletons[0].templates == ("RHS_predictor", "ApproxUpdate")


@pytest.mark.parametrize("change, key, line, expected", [
    (("ivps: [Cusp, IC]", "ivps: [Cusp, Brusselator]"), "ivps[1]", 2, "library name"),
    (("methods: [radauIIA7]", "methods: [radau9]"), "methods[0]", 1, "library name"),
    (("n: [600, 6000]", "n: [601, 6000]"), "n[0]", 5, "multiple of 3 for IVP Cusp"),
    (("n: [600, 6000]", "n: [0]"), "n[0]", 5, "an integer between 1 and"),
    (("n: [600, 6000]", "n: {from: 600, to: 1" + "0" * 400 + ", points: 3}"), "n.to", 5,
     "an integer between 1 and 9223372036854775807"),
    (("threads: [1, 2]", "threads: [0]"), "threads[0]", 6, ">= 1"),
    (("machine: host", "machine: nowhere.yml"), "machine", 4, "an existing machine file"),
    (("skeletons: [A, C]", "skeletons: [A, A]"), "skeletons", 3, "listed once"),
    (("methods: [radauIIA7]", "methods: [radauIIA7, radauIIA7]"), "methods", 1, "listed once"),
    (("ivps: [Cusp, IC]", "ivps: [Cusp, Cusp]"), "ivps", 2, "listed once"),
    (("methods: [radauIIA7]", "methods: []"), "methods", 1, "at least 1 item"),
    (("ivps: [Cusp, IC]", "ivps: []"), "ivps", 2, "at least 1 item"),
    (("skeletons: [A, C]", "skeletons: []"), "skeletons", 3, "at least 1 item"),
    (("threads: [1, 2]", "threads: [1, 2]\nstrategy: {name: tpe}"), "strategy.name", 7,
     "k beside name: tpe"),
    (("threads: [1, 2]", "threads: [1, 2]\nstrategy: {name: guess}"), "strategy.name", 7, "one of"),
    (("threads: [1, 2]", "threads: [1, 2]\ncolour: red"), "colour", 7, "unknown key"),
])
def test_malformed_scenario(write, change, key, line, expected):
    assert change[0] in SCENARIO
    path = write("bad.scenario.yaml", SCENARIO.replace(*change, 1))
    expect_error(path, key=key, line=line, expected=expected)


def test_templates_beside_the_scenario(write, tmp_path):
    text = (PROJECT_ROOT / "scenarios/kernels/Update.kernel.yaml").read_text()
    (tmp_path / "MyUpdate.kernel.yaml").write_text(text.replace("Update_j", "MyUpdate_j"))
    (tmp_path / "x.skeleton.yaml").write_text(
        "code: |\n  %KERNEL RHS_predictor\n  %KERNEL Approx\n  %KERNEL MyUpdate\n")
    scenario = load(write("s.scenario.yaml", SCENARIO.replace("[A, C]", "[x.skeleton.yaml]")))
    assert [t.name for t in scenario.templates] == ["RHS_predictor", "Approx", "MyUpdate"]


def test_machine_file_name_from_the_library(write):
    text = SCENARIO.replace("machine: host", "machine: SkylakeSP_Gold-6148.yml")
    assert load(write("s.scenario.yaml", text)).machine.cores == 40


def test_skeleton_naming_an_unknown_template(write, tmp_path):
    skeleton = tmp_path / "x.skeleton.yaml"
    skeleton.write_text("code: |\n  %COM omp_barrier\n  %KERNEL RHS_predictor\n  %KERNEL Magic\n")
    path = write("s.scenario.yaml", SCENARIO.replace("[A, C]", "[x.skeleton.yaml]"))
    expect_error(path, key="code", line=4, expected="a kernel template of the scenario",
                 file=skeleton)


def test_binding_an_undeclared_array(write, tmp_path):
    skeleton = tmp_path / "x.skeleton.yaml"
    skeleton.write_text("code: |\n  %KERNEL RHS_predictor\n  %KERNEL RHS Q=Yprev\n")
    path = write("s.scenario.yaml", SCENARIO.replace("[A, C]", "[x.skeleton.yaml]"))
    expect_error(path, key="code", line=3, expected="a binding of an array declared", file=skeleton)


def test_library_scenarios_all_load():
    for path in sorted((PROJECT_ROOT / "scenarios").glob("*.yaml")):
        assert load(path, "scenario").skeletons


@pytest.mark.parametrize("text, name, percent, k, seed", [
    ("preselect:10", "preselect", 10.0, 0, 0), ("top_k:8", "top_k", 5.0, 8, 0),
    ("run_all", "run_all", 5.0, 0, 0), ("random:12", "random", 5.0, 12, 0),
    ("random:12:7", "random", 5.0, 12, 7), ("tpe:9", "tpe", 5.0, 9, 0),
    ("tpe:9:4", "tpe", 5.0, 9, 4), ("top_k:3+sample:0.25", "top_k", 5.0, 3, 0),
    ("hybrid:0.3 + sample:0.1", "hybrid", 5.0, 0, 0)])
def test_strategy_spellings_parse_and_spell_back(text, name, percent, k, seed):
    from hybridtune.describe.strategy import parse_strategy
    strategy = parse_strategy(text)
    assert (strategy.name, strategy.deviation_percent, strategy.k, strategy.seed) == \
        (name, percent, k, seed)
    assert parse_strategy(strategy.spelling) == strategy


@pytest.mark.parametrize("text, expected", [
    ("preselect", "a strategy"), ("preselect:-1", "between 0 and 1000"), ("top_k:0", ">= 1"),
    ("random:3:x", "SEED"), ("run_all:2", "a strategy"), ("best", "a strategy"),
    ("tpe:0", r"tpe:K\[:SEED\] with K"), ("tpe", "a strategy"), ("top_k:3+sample:1", "0 <= S < 1"),
    ("hybrid+share:0.2", r"\+sample:S"), ("preselect:5+sample", r"\+sample:S"),
    ("bogus+sample:0.2", "a strategy")])
def test_bad_strategy_spellings_say_what_was_expected(text, expected):
    from hybridtune.describe.strategy import parse_strategy
    with pytest.raises(ValueError, match=expected):
        parse_strategy(text)


def test_a_scenario_spells_its_strategy_as_the_command_line_does(write, default_scenario):
    path = write("s.scenario.yaml", (Path(default_scenario.path).read_text()
                                      .replace("strategy: hybrid", "strategy: random:4:2")))
    assert load(path, "scenario").strategy.spelling == "random:4:2"
    assert default_scenario.strategy.spelling == f"hybrid:{HYBRID_STOP:g}"
    sampled = write("u.scenario.yaml", (Path(default_scenario.path).read_text().replace(
        "strategy: hybrid", "strategy: {name: preselect, sample: 0.2}")))
    assert load(sampled, "scenario").strategy.spelling == "preselect:5+sample:0.2"
    bad = write("t.scenario.yaml", (Path(default_scenario.path).read_text()
                                     .replace("strategy: hybrid", "strategy: top_k:none")))
    with pytest.raises(DescriptionError, match="top_k:K"):
        load(bad, "scenario")
