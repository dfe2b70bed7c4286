"""IVP descriptions: valid sizes, derived facts, and each malformed block refused with a located error."""

import pytest

from hybridtune.describe.ivp import CHECK_LIMIT, SizeRule
from hybridtune.describe.loader import load, load_named
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from hybridtune.face.cli import main
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
    (("n: {min: 6, multiple_of: 2}", "n: {min: 0, multiple_of: 2}"), "n.min", 2,
     "between 1 and 1000000"),
    (("n: {min: 6, multiple_of: 2}", "n: {min: 6, multiple_of: 99999999999999999999999}"),
     "n.multiple_of", 2, "between 1 and 1000000"),
    (("n: {min: 6, multiple_of: 2}", "n: {min: 6, multiple_of: 999983, square_of: g}"), "n", 2,
     "smallest valid n is at most 1000000"),
    (("  N: \"n / 2\"", "  N: \"n * 9223372036854775807\""), "quantities.N", 4, "integer overflow"),
    (("  N: \"n / 2\"", "  N: \"n / (n - 6)\""), "quantities.N", 4, "division by zero"),
    (("double E = D * N", "double E = D * (N % (N - 3))"), "constants[1]", 7, "division by zero"),
    (("%in[j + N]\"", "%in[j + 9223372036854775807]\""), "components[0].code", 11,
     "integer overflow"),
    (("    size: N - 1\n", "    size: N - 1 + 0 * (1 / 0)\n"), "components[1]", 12,
     "division by zero"),
    (("  - first: N\n    size: N", "  - first: N\n    size: N\n    repeat: 9223372036854775807\n"
      "    stride: 0"), "components[2].repeat", 17, "a repeat count between 0 and n"),
])
def test_malformed_ivp(write, change, key, line, expected):
    assert change[0] in GOOD
    path = write("bad.ivp.yaml", GOOD.replace(*change, 1))
    expect_error(path, key=key, line=line, expected=expected)


WAVE = (PROJECT_ROOT / "scenarios/ivps/Wave1D.ivp.yaml").read_text()


@pytest.mark.parametrize("index", ["j + 99999999999999999999999", "j + 18446744073709551616",
                                   "j - 9" + "9" * 5000])
def test_an_index_beyond_64_bits_is_a_located_error(write, capsys, index):
    text = WAVE.replace("c4 * %in[j + 4])", f"c4 * %in[{index}])", 1)
    path = write("Big.ivp.yaml", text)
    line = text.splitlines().index(next(x for x in text.splitlines() if index in x)) + 1
    error = expect_error(path, key="components[0].code", line=line,
                         expected="an integer literal of at most 9223372036854775807")
    assert index[:20] in str(error.value)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"Big.ivp.yaml:{line}: key 'components[0].code'" in err and "an integer literal" in err


@pytest.mark.parametrize("rule", [SizeRule(1, 12, "g"), SizeRule(5, 8, "g"), SizeRule(3, 7),
                                  SizeRule(50, 1, "g"), SizeRule(1, 2 ** 3 * 3 ** 2 * 5, "g")])
def test_next_valid_is_the_smallest_valid_size(rule):
    for n in (1, 2, 35, 36, 37, 1000):
        found = rule.next_valid(n)
        assert rule.check(found) is None and found >= n
        assert all(rule.check(m) for m in range(max(n, 1), found))


def test_the_smallest_valid_size_may_reach_the_check_limit():
    assert SizeRule(1, 1000, "g").next_valid(1) == 10000   # 100^2: 1000 divides g^2 from g = 100
    assert SizeRule(CHECK_LIMIT, 1).samples()[0] == CHECK_LIMIT


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
