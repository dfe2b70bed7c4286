"""C generation details: coefficients as constants, zero terms dropped, fmax against a literal as a
select, whole powers as products."""

from pathlib import Path

from hybridtune.describe.expr import parse_expression
from hybridtune.describe.loader import load_named
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import integer_powers, kernel_function, select_bounds, simplify


def test_zero_terms_and_unit_factors_are_dropped():
    tree = simplify(parse_expression("y + 0.0 * h * a + 1.0 * b - 0.0"))
    assert to_c(tree) == "y + b"


def test_fmax_with_a_literal_becomes_a_select():
    assert to_c(select_bounds(parse_expression("fmax(x - 1.0, 0.0)"))) == \
        "x - 1.0 > 0.0 ? x - 1.0 : 0.0"
    assert to_c(select_bounds(parse_expression("fmin(2.0, x)"))) == "x < 2.0 ? x : 2.0"
    assert to_c(select_bounds(parse_expression("fmax(x, y)"))) == "fmax(x, y)"   # kept


def test_whole_powers_become_products():
    assert to_c(integer_powers(parse_expression("pow(z - 1.0, 3.0) / 16.0"))) == \
        "(z - 1.0) * (z - 1.0) * (z - 1.0) / 16.0"
    assert to_c(integer_powers(parse_expression("pow(x, 2.0) + pow(x, 8.0)"))) == \
        "x * x + x * x * x * x * x * x * x * x"
    for kept in ("pow(x, 2.5)", "pow(x, 9.0)", "pow(x, 1.0)", "pow(x, -2.0)", "pow(x, y)"):
        assert to_c(integer_powers(parse_expression(kept))) == kept


def test_medakzo_kernel_calls_no_pow(default_scenario, radau7):
    ivp = load_named("ivp", "Medakzo", Path("."))
    template = default_scenario.template_map["RHS_predictor"]
    code = kernel_function(template, "RHS_predictor_jl", radau7, ivp, "k").code
    assert "pow(" not in code and "ivp_dz" in code


def test_kernel_is_specialised_on_method_and_ivp(default_scenario, radau7):
    ivp = load_named("ivp", "IC", Path("."))
    lobatto = load_named("method", "lobattoIIIC6", Path("."))   # c_1 = 0: t + 0 * h is t
    template = default_scenario.template_map["RHS_predictor"]
    code = kernel_function(template, "RHS_predictor_jl", lobatto, ivp, "k").code
    assert "fmax" not in code and "ivp_Uop" in code
    assert "cos(2.0 * M_PI * t / 80.0)" in code           # stage 1 at time t exactly
    assert f"{lobatto.c[1]!r} * h" in code                # stage 2's node as a constant
    lc = kernel_function(default_scenario.template_map["LC"], "LC_jli", radau7, ivp, "k").code
    assert repr(radau7.A[3][3]) in lc and "ht_A" not in lc   # unrolled: literals, no table
    lc_ilj = kernel_function(default_scenario.template_map["LC"], "LC_ilj", radau7, ivp, "k").code
    assert "ht_A[l][i]" in lc_ilj                          # a run-time stage loop reads the table


def test_a_repeated_block_inside_a_stage_loop_keeps_the_weights_table(default_scenario, radau7):
    """Heat2D's edges recur every g components: the loop over their starts must not shadow the
    method's tables (a block start once named ht_b hid ht_b[i] and the kernel did not compile)."""
    ivp = load_named("ivp", "Heat2D", Path("."))
    template = default_scenario.template_map["RHS_Approx"]
    code = kernel_function(template, "RHS_Approx_ij", radau7, ivp, "k").code
    assert "ht_b[i]" in code and "for (long ht_r = 0;" in code
    declared = {line.split("=")[0].split()[-1] for line in code.splitlines()
                if line.strip().startswith(("const long", "long ", "double "))}
    assert not declared & {"ht_A", "ht_b", "ht_c"}


def test_an_ivps_names_are_kept_per_ivp_and_handed_out_as_copies():
    from hybridtune.generate.ckernel import ivp_names
    wave, cusp = load_named("ivp", "Wave1D", Path(".")), load_named("ivp", "Cusp", Path("."))
    first = ivp_names(wave)
    first["intruder"] = None
    again = ivp_names(wave)
    assert "intruder" not in again and again == ivp_names(load_named("ivp", "Wave1D", Path(".")))
    assert ivp_names(cusp) != again
