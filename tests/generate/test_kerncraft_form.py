"""The kerncraft form: same operations and loads as the real kernel, one loop per nest and block."""

from __future__ import annotations

import sympy
import pytest

from hybridtune.describe.expr import FUNCTIONS, names, parse_expression
from hybridtune.describe.costs import CALL_OPERATIONS, operation_counts, weighted_operations
from hybridtune.describe.printing import to_c
from hybridtune.generate.kerncraft_form import kerncraft_form, operation_totals
from hybridtune.generate.size_expressions import N, as_arithmetic


def test_every_kernel_keeps_operations_and_loads(default_scenario, radau7):
    checked = 0
    for ivp in default_scenario.ivps:
        for template in default_scenario.templates:
            for variant in template.variants:
                form = kerncraft_form(template, variant.name, radau7, ivp)
                totals = operation_totals(form)
                assert form.parts, (template.name, variant.name)
                assert totals["operations"] == totals["source_operations"], (variant.name, ivp.name)
                assert totals["loads"] == totals["source_loads"], (variant.name, ivp.name)
                for part in form.parts:
                    assert "fmax" not in part.code and "pow" not in part.code and "?" not in part.code
                    assert part.code.count("for (") == 1
                checked += 1
    assert checked == 4 * 27


@pytest.mark.parametrize("text, operations", [
    ("exp(x)", CALL_OPERATIONS["exp"]), ("pow(x, 2.5)", CALL_OPERATIONS["pow"]),
    ("sqrt(x) + fabs(y)", 3), ("fmax(x, y) + z", 2), ("atan2(x, y)", CALL_OPERATIONS["atan2"]),
    ("x > 0.0 ? x : 0.0", 2), ("x > 0.0 ? 1.0 : y * y", 3)])
def test_calls_and_conditionals_become_arithmetic(text, operations):
    """A call costs what a libm call does (CALL_OPERATIONS), its arguments' reads kept."""
    tree = parse_expression(text)
    lowered = as_arithmetic(tree)
    assert sum(operation_counts(lowered).values()) == operations
    assert weighted_operations(operation_counts(tree)) == operations
    assert not any(name in to_c(lowered) for name in ("exp", "pow", "fmax", "sqrt", "?"))
    assert names(lowered) == names(tree)


def test_transcendental_calls_cost_more_than_arithmetic():
    assert CALL_OPERATIONS["sqrt"] == CALL_OPERATIONS["fabs"] == 1
    assert CALL_OPERATIONS["pow"] == CALL_OPERATIONS["exp"] + CALL_OPERATIONS["log"] + 1
    assert all(CALL_OPERATIONS[f] >= 15 for f in ("exp", "log", "sin", "cos", "tan", "atan",
                                                  "sinh", "tanh"))
    assert set(CALL_OPERATIONS) == set(FUNCTIONS)


def test_loops_over_stages_become_repeated_parts(default_scenario, radau7):
    template = default_scenario.template_map["LC"]
    form = kerncraft_form(template, "LC_ijl", radau7, default_scenario.ivps[0])
    # first term, the s - 1 = 3 identical i-iterations, the final update
    assert [p.calls for p in form.parts] == [1, radau7.stages - 1, 1]
    assert all(p.iterations == N for p in form.parts)
    assert form.ivp == ""


def test_rhs_blocks_keep_n_symbolic(default_scenario, radau7):
    cusp = next(i for i in default_scenario.ivps if i.name == "Cusp")
    form = kerncraft_form(default_scenario.template_map["RHS"], "RHS_jl", radau7, cusp)
    assert len(form.parts) == 3                      # the three blocks of N - 2 components
    assert len(form.omitted) == 6                    # the six single-component boundary blocks
    for part in form.parts:
        assert "[3][ivp_N]" in part.code             # rows of N: kerncraft splits j + 2N into [2][j]
        assert set(part.defines) == {"ivp_N", "n"}
        assert sympy.simplify(part.iterations - (N / 3 - 2)) == 0
        assert float(part.working_set_bytes.subs(N, 3000)) > 0


def test_square_grids_get_rows_kerncraft_can_split(default_scenario, radau7):
    from hybridtune.describe.library import PROJECT_ROOT
    from hybridtune.describe.loader import load_named
    heat = load_named("ivp", "Heat2D", PROJECT_ROOT)
    form = kerncraft_form(default_scenario.template_map["RHS"], "RHS_jl", radau7, heat)
    # the interior rows (one run of g - 2 per row); the edge rows and columns, O(sqrt n) of the
    # n components, are omitted
    assert len(form.parts) == 1 and len(form.omitted) == 8
    assert sum("vanishes" in note for note in form.omitted) == 2
    interior = form.parts[0]
    assert sympy.simplify(interior.iterations - (N - 4 * sympy.sqrt(N) + 4)) == 0
    for part in form.parts:
        body = part.code.split("for (", 1)[1]
        assert "[ivp_g" not in body and "[-" not in body      # rows are small non-negative integers
        assert "[ivp_g][ivp_g]" in part.code


@pytest.mark.parametrize("text, lowered", [
    ("x / 16.0", "x * 0.0625"), ("x / 0.5", "x * 2.0"), ("x / 3.0", "x / 3.0"), ("x / y", "x / y")])
def test_division_by_a_power_of_two_is_a_multiplication(text, lowered):
    assert to_c(as_arithmetic(parse_expression(text))) == lowered


def test_values_in_j_stay_per_component(default_scenario, radau7):
    medakzo = next(i for i in default_scenario.ivps if i.name == "Medakzo")
    form = kerncraft_form(default_scenario.template_map["RHS"], "RHS_lj", radau7, medakzo)
    main = next(p for p in form.parts if p.block == 1)    # pow((j + 1) * dz - 1.0, 4.0) / 16.0 ...
    assert "(j * s0 - k0)" in main.code     # converted each iteration, not hoisted as a scalar
    assert "double s" in main.code and "double j" not in main.code
