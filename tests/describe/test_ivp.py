"""IVP descriptions: valid sizes, derived facts, and each malformed block refused with a located error."""

import numpy as np
import pytest

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.expr import (RESERVED_NAMES, ExpressionError, Name, Num, parse_expression,
                                      substitute)
from hybridtune.describe.ivp import CHECK_LIMIT, SizeRule
from hybridtune.describe.printing import to_c
from hybridtune.reference.rhs import component, right_hand_side
from hybridtune.describe.loader import load, load_named
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import RequestError
from hybridtune.commands.main import main
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
                                  SizeRule(50, 1, "g"), SizeRule(1, 2 ** 3 * 3 ** 2 * 5, "g"),
                                  SizeRule(1, 1, cube_of="g"), SizeRule(9, 16, cube_of="g"),
                                  SizeRule(2, 2 ** 4 * 3, cube_of="g"), SizeRule(18, 1, "g", fields=2),
                                  SizeRule(1, 4, cube_of="g", fields=3), SizeRule(1, 6, fields=1)])
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


@pytest.mark.parametrize("name, n, halo", [
    ("Lorenz96", 40, 2), ("Wave1D", 300, 4), ("Heat2D", 400, 20), ("Cusp", 300, 100),
    ("InverterChain", 300, 1), ("NBody", 60, 59), ("Diffusion3D", 125, 25)])
def test_the_halo_counts_around_the_ring_and_sums_by_their_ends(name, n, halo):
    # Lorenz96's boundary blocks read across the ring (distance n - 2 on the line, 2 on the ring);
    # NBody's sums over every body bound its halo by their far end
    assert load_named("ivp", name, PROJECT_ROOT).halo(n) == halo


def test_alias_resolves():
    assert load_named("ivp", "IC", PROJECT_ROOT).name == "InverterChain"


# --- cube_of, fields and max -------------------------------------------------------------------

def test_cube_of_names_the_cube_root():
    rule = SizeRule(27, cube_of="g")
    assert [rule.check(n) for n in (27, 64, 125)] == [None] * 3
    assert rule.check(100) == "n a perfect cube (n = g^3)"
    assert rule.next_valid(28) == 64 and rule.root_value(10 ** 15) == 10 ** 5
    assert rule.samples() == [27, 64, 125, 1000, 10648]


def test_fields_multiply_the_grid():
    rule = SizeRule(18, 1, "g", fields=2)
    assert rule.check(50) is None and rule.root_value(50) == 5
    assert rule.check(49) == "n a 2 * perfect square (n = 2 * g^2)"
    assert rule.next_valid(51) == 72


def test_max_bounds_the_sizes():
    rule = SizeRule(12, 6, maximum=9000)
    assert rule.check(9006) == "n <= 9000" and rule.check(9000) is None
    assert rule.next_valid(8995) == 9000
    assert rule.next_valid(10 ** 6) == 9000          # never beyond the maximum
    assert max(rule.samples()) == 9000
    assert SizeRule(1, cube_of="g", maximum=1000).next_valid(1001) == 1000
    assert SizeRule(1, cube_of="g", maximum=999).next_valid(1001) == 729
    nbody = load_named("ivp", "NBody", PROJECT_ROOT)
    top = nbody.sizes.maximum
    assert top is not None and top // 6 <= 1500                  # a step costs O(N^2)
    with pytest.raises(RequestError, match=f"n <= {top}"):
        nbody.check_n(top + 6)


def test_a_cube_grid_describes_its_root(write):
    ivp = load(write("cube.ivp.yaml", CUBE))
    assert ivp.environment(64) == {"n": 64, "g": 4, "P": 16}
    assert ivp.int_names == {"j", "n", "g", "P"}
    assert ivp.access_distance(64) == 16


CUBE = """
name: Cube
n: {min: 8, max: 1000, cube_of: g}
quantities:
  P: "g * g"
components:
  - first: 0
    size: n - P
    code: "%in[j + P] - %in[j]"
  - first: n - P
    size: P
    code: "-%in[j]"
initial_values:
  - first: 0
    size: n
    code: "1.0"
"""


@pytest.mark.parametrize("change, key, line, expected", [
    (("n: {min: 8, max: 1000, cube_of: g}", "n: {min: 8, cube_of: g, square_of: h}"), "n", 2,
     "one of square_of and cube_of"),
    (("n: {min: 8, max: 1000, cube_of: g}", "n: {min: 8, cube_of: n}"), "n.cube_of", 2,
     "a new name for cbrt(n / fields)"),
    (("n: {min: 8, max: 1000, cube_of: g}", "n: {min: 8, max: 7, cube_of: g}"), "n.max", 2,
     "a maximum of at least the minimum 8"),
    (("n: {min: 8, max: 1000, cube_of: g}", "n: {min: 9, max: 26, cube_of: g}"), "n.max", 2,
     "a maximum the rules can meet: the smallest valid n is 27"),
    (("n: {min: 8, max: 1000, cube_of: g}", "n: {min: 8, fields: 2}"), "n.fields", 2,
     "fields together with square_of or cube_of"),
])
def test_malformed_cube(write, change, key, line, expected):
    assert change[0] in CUBE
    expect_error(write("bad.ivp.yaml", CUBE.replace(*change, 1)), key=key, line=line,
                 expected=expected)


# --- blocks repeated on two levels ---------------------------------------------------------------

def test_outer_repeat_covers_planes():
    cube = load_named("ivp", "Diffusion3D", PROJECT_ROOT)
    env = cube.environment(125)
    covered = sorted(j for block in cube.components for j in block.indices(env))
    assert covered == list(range(125))
    interior = next(b for b in cube.components if b.outer_repeat is not None and
                    len(b.indices(env)) == 27)
    assert interior.starts(env)[:4] == [31, 36, 41, 56]    # rows of plane 1, then plane 2


@pytest.mark.parametrize("extra, expected", [
    ("    outer_repeat: 2\n", "'outer_repeat' and 'outer_stride' given together"),
    ("    outer_repeat: 2\n    outer_stride: N\n", "'outer_repeat' with 'repeat'"),
])
def test_outer_repeat_needs_its_stride_and_an_inner_level(write, extra, expected):
    text = GOOD.replace("    size: N - 1\n", "    size: N - 1\n" + extra, 1)
    expect_error(write("bad.ivp.yaml", text), key="components[1]", line=12, expected=expected)


# --- sum(k, LO, HI, BODY) ----------------------------------------------------------------------

PAIRS = """
name: Pairs
n: {min: 4, multiple_of: 2}
quantities:
  N: "n / 2"
constants:
  - "double c = 0.5"
components:
  - first: 0
    size: N
    code: "%in[j + N]"
  - first: N
    size: N
    code: "c * sum(k, 0, N, (%in[k] - %in[j - N]) * exp(-%in[k + N])) - %in[j]"
initial_values:
  - first: 0
    size: n
    code: "1.0"
"""


def test_a_sum_over_components(write):
    ivp = load(write("pairs.ivp.yaml", PAIRS))
    facts = ivp.block_facts(10)
    # per component: c * (...) - %in[j] outside, 5 terms of (sub, neg, exp, mul) plus their sum
    assert facts[1]["operations"] == {"mul": 1 + 5, "add": 1 + 5 * 2, "exp": 5}
    assert facts[1]["loads"] == 2 + 5 * 2           # %in[j], %in[j - N]; %in[k], %in[k + N]
    assert facts[1]["access_distance"] == 9         # j = 9 reads component k + N = 5 .. j - N = 4
    rhs = right_hand_side(ivp, 10)
    y = np.linspace(0.1, 1.0, 10)
    x, v = y[:5], y[5:]
    want = 0.5 * ((x[None, :] - x[:, None]) * np.exp(-v[None, :])).sum(axis=1) - v
    assert np.allclose(rhs(0.0, y)[5:], want, rtol=1e-14)
    assert component(ivp, 10)(7, 0.0, y) == pytest.approx(want[2], rel=1e-14)


def test_a_sum_prints_as_a_statement_expression_and_renames_its_variable():
    tree = parse_expression("2.0 * sum(k, 1, N - 1, %in[k] * %in[j])")
    renamed = substitute(tree, {"k": Name("ivp_k"), "N": Name("ivp_N")})
    assert to_c(renamed) == ("2.0 * ({ double ht_sum = 0.0; for (long ivp_k = 1; ivp_k < "
                             "ivp_N - 1; ++ivp_k) ht_sum += %in[ivp_k] * %in[j]; ht_sum; })")
    with pytest.raises(ExpressionError, match="renamed, not replaced"):
        substitute(tree, {"k": Num(3, "3")})


def test_a_sum_evaluates_whether_or_not_its_body_uses_the_variable():
    y = np.arange(6.0)
    const = parse_expression("sum(k, 0, 3, 2.0)")
    assert Evaluator({"j": np.arange(4)}, input_vector=lambda i: y[i])(const).tolist() == [6.0] * 4
    assert Evaluator({"j": 1})(const) == 6.0
    reads = parse_expression("sum(k, 2, 5, %in[k] * %in[j])")
    assert Evaluator({"j": np.arange(3)}, input_vector=lambda i: y[i])(reads).tolist() == \
        [0.0, 9.0, 18.0]
    assert Evaluator({"j": 2}, input_vector=lambda i: y[i])(parse_expression(
        "sum(k, 3, 3, %in[k])")) == 0.0                                  # an empty range


@pytest.mark.parametrize("change, expected", [
    ("sum(k, 0, N, sum(i, 0, N, %in[i]))", "a sum inside a sum"),
    ("sum(k, 0, N, i * %in[k])", "undefined name 'i'"),
    ("sum(k, 0, N, %in[i])", "%in indices are integer expressions"),
    ("sum(k, 0, N, %in[k]) + k * 1.0", "undefined name 'k'"),
    ("sum(N, 0, N, %in[N])", "sum variable is a new name"),
    ("sum(j, 0, N, %in[j])", "sum variable is a new name"),
    ("sum(c, 0, N, %in[c])", "sum variable is a new name"),
    ("sum(t, 0, N, 1.0)", "sum variable is a new name"),
    ("sum(k, 0, j, %in[k])", "undefined name 'j'"),
    ("sum(k, 0, N * 1.0, %in[k])", "sum bounds of integer type"),
    ("sum(k, 0, N + 1, %in[k + N])", "at n = 4, j = 2 it reads component 4"),
    ("sum(k, -1, N, %in[k])", "it reads component -1"),
    ("sum(k + 1, 0, N, %in[k])", "first argument is a plain name"),
    ("sum(k, 0, N)", "expected ','"),
    ("sum(k, 0, N, %in[k * 0.5])", "integer expressions"),
])
def test_malformed_sum(write, change, expected):
    text = PAIRS.replace("c * sum(k, 0, N, (%in[k] - %in[j - N]) * exp(-%in[k + N]))", change, 1)
    expect_error(write("bad.ivp.yaml", text), key="components[1].code", line=None,
                 expected=expected)


def test_a_sum_belongs_in_component_code(write):
    text = PAIRS.replace('    code: "1.0"', '    code: "sum(k, 0, N, 1.0)"')
    expect_error(write("bad.ivp.yaml", text), key="initial_values[0].code", line=None,
                 expected="without sum(...)")
    assert "sum" in RESERVED_NAMES
    text = PAIRS.replace("double c = 0.5", "double sum = 0.5")
    expect_error(write("bad.ivp.yaml", text), key="constants[0]", line=None, expected="reserved")
