"""IVP descriptions: valid sizes, derived facts, and each malformed block refused with a located error."""

import pytest

from hybridtune.describe.loader import load, load_named
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from tests_support import expect_error

GOOD = """
name: Ring
n: {min: 6, multiple_of: 2}
quantities:
  N: "n / 2"
constants:
  - "double D = 2.0"
  - "double E = D * N"
components:
  - first: 0
    size: 1
    code: "D * (%in[N - 1] - %in[j]) + %in[j + N]"
  - first: 1
    size: N - 1
    code: "D * (%in[j - 1] - %in[j]) + sin(t) * %in[j + N]"
  - first: N
    size: N
    code: "t <= 1.0 ? -%in[j] : -E * %in[j - N]"
initial_values:
  - first: 0
    size: n
    code: "j % 2 == 0 ? 1.0 : 0.5"
"""


def test_good_ivp(write):
    ivp = load(write("ring.ivp.yaml", GOOD))
    assert ivp.name == "Ring"
    assert ivp.environment(10) == {"n": 10, "N": 5, "D": 2.0, "E": 10.0}
    facts = ivp.block_facts(10)
    assert [f["components"] for f in facts] == [1, 4, 5]
    assert facts[0]["access_distance"] == 5 and facts[1]["access_distance"] == 5
    assert facts[1]["loads"] == 3
    assert facts[1]["operations"] == {"add": 2, "mul": 2, "sin": 1}
    assert facts[2]["operations"] == {"cmp": 1, "select": 1, "mul": 1}


@pytest.mark.parametrize("n, problem", [(4, "n >= 6"), (7, "multiple of 2"), (8.0, "integer")])
def test_invalid_n_is_refused(write, n, problem):
    ivp = load(write("ring.ivp.yaml", GOOD))
    with pytest.raises(RequestError, match=problem):
        ivp.check_n(n)


@pytest.mark.parametrize("change, key, line, expected", [
    # gap: the second block starts one component late
    (("  - first: 1\n    size: N - 1", "  - first: 2\n    size: N - 2"), "components[1].first", 12,
     "(a gap)"),
    # overlap
    (("  - first: N\n    size: N", "  - first: N - 1\n    size: N + 1"), "components[2].first", 15,
     "(an overlap)"),
    # blocks ending short of n
    (("  - first: N\n    size: N", "  - first: N\n    size: N - 1"), "components", 8,
     "they end at component"),
    (("%in[j + N]\"", "%in[j + 2 * N]\""), "components[0].code", 11, "within 0..n-1"),
    (("%in[j - N]", "%in[j - N - 1]"), "components[2].code", 17, "it reads component -1"),
    (("sin(t)", "sin(tt)"), "components[1].code", 14, "undefined name 'tt'"),
    (("sin(t)", "system(t)"), "components[1].code", 14, "unknown function 'system'"),
    (("sin(t)", "sin(t); abort()"), "components[1].code", 14, "statement separator"),
    (("sin(t)", "sin(t) } {"), "components[1].code", 14, "brace"),
    (("%in[j - 1]", "%in[j - 1.0]"), "components[1].code", 14, "integer expressions"),
    (("%in[j - 1]", "%in[j - D]"), "components[1].code", 14, "integer expressions"),
    (("sin(t)", "%in[j] % 2"), "components[1].code", 14, "'%' to integer operands"),
    (("\"j % 2 == 0 ? 1.0 : 0.5\"", "\"%in[j]\""), "initial_values[0].code", 21, "without %in"),
    (("  N: \"n / 2\"", "  N: \"n / 2.0\""), "quantities.N", 4, "integer type"),
    (("  N: \"n / 2\"", "  N: \"M / 2\""), "quantities.N", 4, "undefined name 'M'"),
    (("double E = D * N", "double E = D * j"), "constants[1]", 7, "undefined name 'j'"),
    (("double E = D * N", "int E = 3"), "constants[1]", 7, "'double NAME = value'"),
    (("double E = D * N", "double D = 1.0"), "constants[1]", 7, "already defined"),
    (("double E = D * N", "double int = 1.0"), "constants[1]", 7, "reserved"),
    (("    size: N - 1\n", "    size: N - 1\n    stride: 2\n"), "components[1]", 12,
     "'repeat' and 'stride' given together"),
    (("    size: N - 1\n", "    size: N - 1\n    width: 2\n"), "components[1].width", 14,
     "unknown key"),
    (("name: Ring\n", ""), "name", None, "missing"),
    (("n: {min: 6, multiple_of: 2}", "n: {min: 0, multiple_of: 2}"), "n.min", 2, ">= 1"),
])
def test_malformed_ivp(write, change, key, line, expected):
    assert change[0] in GOOD
    path = write("bad.ivp.yaml", GOOD.replace(*change, 1))
    expect_error(path, key=key, line=line, expected=expected)


def test_repeated_blocks_cover_a_grid(write):
    heat = load_named("ivp", "Heat2D", PROJECT_ROOT)
    env = heat.environment(25)
    covered = sorted(j for block in heat.components for j in block.indices(env))
    assert covered == list(range(25))
    assert heat.access_distance(25) == 5
    with pytest.raises(RequestError, match="perfect square"):
        heat.check_n(24)


@pytest.mark.parametrize("name, n, distance", [
    ("Cusp", 300, 200), ("InverterChain", 300, 1), ("Medakzo", 300, 150), ("Wave1D", 300, 4),
    ("Heat2D", 400, 20),
])
def test_access_distance_of_the_library(name, n, distance):
    assert load_named("ivp", name, PROJECT_ROOT).access_distance(n) == distance


def test_alias_resolves():
    assert load_named("ivp", "IC", PROJECT_ROOT).name == "InverterChain"
