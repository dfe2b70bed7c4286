"""IVPs split at / and %: the kerncraft form of the written blocks, and C that agrees with the reference."""

from __future__ import annotations

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.kerncraft_form import kerncraft_form
from hybridtune.generate.pool import pool_for
from hybridtune.measure.runner import MeasureOptions, MeasureTask, measure
from hybridtune.measure.tasks import reference_after

PERIODIC = PROJECT_ROOT / "tests" / "data" / "periodic"
QUICK = MeasureOptions(budget_s=0.05, min_repetitions=3, max_repetitions=4, timeout_s=60.0)


def test_every_kernel_form_of_the_modulo_grid_is_that_of_the_blocked_grid(default_scenario, radau7):
    written = load(PERIODIC / "GrayScott2D.ivp.yaml")
    blocked = load(PERIODIC / "GrayScott2DBlocked.ivp.yaml")
    for template in default_scenario.templates:
        if not template.evaluates_rhs:
            continue
        for variant in template.variants:
            forms = [kerncraft_form(template, variant.name, radau7, ivp)
                     for ivp in (written, blocked)]
            parts = [sorted((p.code_hash, p.calls, str(p.iterations), p.operations, p.loads)
                            for p in form.parts) for form in forms]
            assert parts[0] == parts[1], variant.name
            assert "%" not in "".join(p.code for p in forms[0].parts)
            assert forms[0].omitted[0].startswith("component block 0, piece 0 of its split")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_variant_of_the_split_grid_agrees_with_the_reference_of_the_written_one(
        default_scenario, radau7, threads):
    """The generated C loops over the split blocks; the reference evaluates the written code."""
    ivp = load(PERIODIC / "GrayScott2D.ivp.yaml")
    n = 800
    pool = pool_for(default_scenario, radau7)
    skeletons = {s.name: s for s in default_scenario.skeletons}
    h = ivp.step_size(n)
    state = reference_after(radau7, ivp, n, h, 3)
    variant_id = "F_RHS_LC_predictor_jli_RHS_LC_jli_RHS_Approx_Update_ij"
    variant = pool.get(variant_id) or next(v for v in pool.values() if variant_id in v.same_as)
    generated = generate_variant(variant, skeletons[variant.skeleton],
                                 default_scenario.template_map, radau7, ivp)
    # only the initial values keep their / and %: the right-hand side reads j plus constants
    assert [line for line in generated.code.splitlines() if "%" in line and "y[j] =" not in line] \
        == []
    assert "y[j + (ivp_g - 1)]" in generated.code
    result = measure(MeasureTask(generated, radau7.name, ivp.name, n, threads, h, state), QUICK)
    assert result.status == "ok", result.message
    assert result.check_error <= 1e-10
