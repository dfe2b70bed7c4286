"""sum(...) and grid IVPs in generated code: NBody compiles and agrees with the reference; kerncraft reads the forms."""

from __future__ import annotations

import pytest
import sympy

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load, load_named
from hybridtune.generate.ckernel import GenerationError, kernel_function
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.kerncraft_form import kerncraft_form, operation_totals
from hybridtune.generate.pool import pool_for
from hybridtune.generate.size_expressions import N
from hybridtune.measure.runner import MeasureOptions, MeasureTask, measure
from hybridtune.measure.tasks import reference_after
from hybridtune.predict.kerncraft_adapter import analyse

SKYLAKE = str(PROJECT_ROOT / "data" / "machines" / "SkylakeSP_Gold-6148.yml")
QUICK = MeasureOptions(budget_s=0.05, min_repetitions=3, max_repetitions=4, timeout_s=60.0)


def ivp(name):
    return load_named("ivp", name, PROJECT_ROOT)


def test_a_sum_becomes_a_statement_expression_over_a_renamed_variable(default_scenario, radau7):
    code = kernel_function(default_scenario.template_map["RHS"], "RHS_jl", radau7, ivp("NBody"),
                           "k").code
    assert "({ double ht_sum = 0.0; for (long ivp_k = 0; ivp_k < ivp_N; ++ivp_k) ht_sum += " in code
    assert "Y[0 * n + (ivp_k + ivp_N)]" in code and "sqrt(" in code


@pytest.mark.parametrize("name, n, threads", [("NBody", 60, 2), ("Diffusion3D", 125, 2)])
def test_variants_compile_and_agree_with_the_reference(default_scenario, radau7, name, n, threads):
    """A sum (NBody) and blocks repeated on two levels (Diffusion3D), split between threads."""
    problem = ivp(name)
    pool = pool_for(default_scenario, radau7)
    skeletons = {s.name: s for s in default_scenario.skeletons}
    h = problem.step_size(n)
    state = reference_after(radau7, problem, n, h, 3)
    for variant_id in ("A_RHS_predictor_lj_LC_ijl_RHS_jl_Approx_ij_Update_j",
                       "F_RHS_LC_predictor_jli_RHS_LC_jli_RHS_Approx_Update_ij"):
        variant = pool.get(variant_id) or next(v for v in pool.values() if variant_id in v.same_as)
        generated = generate_variant(variant, skeletons[variant.skeleton],
                                     default_scenario.template_map, radau7, problem)
        result = measure(MeasureTask(generated, radau7.name, name, n, threads, h, state), QUICK)
        assert result.status == "ok", (variant_id, result.message)
        assert result.check_error <= 1e-10


def test_nbody_form_has_a_nest_per_sum(default_scenario, radau7):
    form = kerncraft_form(default_scenario.template_map["RHS"], "RHS_jl", radau7, ivp("NBody"))
    nests = [p for p in form.parts if p.code.count("for (") == 2]
    loops = [p for p in form.parts if p.code.count("for (") == 1]
    assert len(nests) == 3 and len(loops) == 4        # vx, vy, vz; positions and the three results
    for nest in nests:
        assert nest.calls == radau7.stages            # one sum per stage, the same loop
        assert sympy.simplify(nest.iterations - N ** 2 / 36) == 0
        # the partial sums along k, the other body's reads at k as arrays, those at j scalars
        assert "a0[k] = a0[k - 1] + " in nest.code and "sqrt" not in nest.code
        assert "for (long k = 0; k < ivp_N; ++k)" in nest.code and "[j]" not in nest.code
        assert set(nest.defines) == {"ivp_N", "n"}
        assert nest.operations == nest.source_operations and nest.loads == nest.source_loads == 4
    totals = operation_totals(form)
    assert totals["operations"] == totals["source_operations"]
    assert totals["loads"] == totals["source_loads"]


NEW_IVPS = ("Brusselator2D", "Diffusion3D", "StiffExp", "NBody", "Lorenz96")


@pytest.mark.parametrize("name", NEW_IVPS)
def test_every_kernel_of_the_new_ivps_keeps_operations_and_loads(default_scenario, radau7, name):
    """As for the paper's IVPs: calls at their libm cost, sums as nests, the same counts."""
    problem = ivp(name)
    for template in default_scenario.templates:
        if not template.evaluates_rhs:
            continue
        for variant in template.variants:
            form = kerncraft_form(template, variant.name, radau7, problem)
            totals = operation_totals(form)
            assert form.parts, variant.name
            assert totals["operations"] == totals["source_operations"], variant.name
            assert totals["loads"] == totals["source_loads"], variant.name
            for part in form.parts:
                assert not any(word in part.code for word in ("exp", "pow", "sqrt", "?"))


def test_a_sum_read_the_form_cannot_split_is_a_clear_error(default_scenario, radau7, write):
    text = (PROJECT_ROOT / "scenarios/ivps/NBody.ivp.yaml").read_text()
    path = write("Odd.ivp.yaml", text.replace("sum(k, 0, N, (%in[k] - %in[j - 3 * N])",
                                              "sum(k, 0, N, (%in[N - 1 - k] - %in[j - 3 * N])", 1))
    odd = load(path)
    template = default_scenario.template_map["RHS"]
    assert "N - 1 - ivp_k" in kernel_function(template, "RHS_jl", radau7, odd, "k").code
    with pytest.raises(GenerationError, match=r"sum over k reads %in\[ivp_N - 1 - k\]; it takes "
                                              r"only reads at k \+ offset or j \+ offset"):
        kerncraft_form(template, "RHS_jl", radau7, odd)


@pytest.mark.parametrize("name, dims", [("Diffusion3D", "[ivp_g][ivp_g][ivp_g]"),
                                        ("Brusselator2D", "[2][ivp_g][ivp_g]")])
def test_grids_get_one_dimension_per_axis(default_scenario, radau7, name, dims):
    form = kerncraft_form(default_scenario.template_map["RHS"], "RHS_jl", radau7, ivp(name))
    assert form.parts and all(dims in part.code for part in form.parts)
    for part in form.parts:
        body = part.code.split("for (", 1)[1]
        assert "ivp_" not in body.split("\n", 1)[1]    # subscripts are small integers and j


@pytest.mark.slow
def test_kerncraft_analyses_the_new_forms(default_scenario, radau7, tmp_path):
    template = default_scenario.template_map["RHS"]
    for name, n, nest in (("NBody", 600, True), ("Diffusion3D", 27000, False),
                          ("Brusselator2D", 20000, False)):
        problem = ivp(name)
        env = problem.environment(n)
        form = kerncraft_form(template, "RHS_jl", radau7, problem)
        part = next(p for p in form.parts if (p.code.count("for (") == 2) == nest
                    and p.iterations.free_symbols)
        defines = {d: n if d == "n" else env[d[len("ivp_"):]] for d in part.defines}
        [result] = analyse(part.code, str(tmp_path / name), SKYLAKE, ((n, defines),), "ECM")
        assert result.status == "ok", (name, result.message)
        assert result.cycles_per_cl[0] > 0
