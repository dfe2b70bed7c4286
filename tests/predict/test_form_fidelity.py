"""The forms' fidelity: timing programs built from generated code and from a form, run for real."""

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.errors import HybridtuneError
from hybridtune.predict.form_fidelity import (TIMER, form_fidelity, form_program, real_program,
                                              run_program)

MACHINE = PROJECT_ROOT / "data" / "machines" / "SkylakeSP_Gold-6148.yml"


def test_a_form_loop_is_timed_with_its_scalars_opaque():
    code = "double a0[n];\ndouble s0;\nfor (int j = 0; j < n; ++j) {\n  a0[j] = s0 * a0[j];\n}\n"
    source = form_program(code, {"n": 64})
    assert "#define n 64" in source and "volatile double v_s0" in source
    assert "double s0 = v_s0;" in source and TIMER.strip() in source
    assert 0 < run_program("form_test_loop", source) < 1e-3


def test_a_program_that_does_not_build_is_an_error():
    with pytest.raises(HybridtuneError, match="build failed"):
        run_program("form_test_broken", "int main(void) { return oops; }")


def test_the_real_program_calls_the_generated_kernel_on_every_stage():
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    source = real_program("/* kernel */", method, 100)
    assert f"static double Y[{method.stages * 100}]" in source
    assert "rhs_kernel(100, 0, 100," in source


@pytest.mark.slow
def test_wave1d_form_is_timed_and_predicted(tmp_path):
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    template = load_named("kernel", "RHS", PROJECT_ROOT)
    row = form_fidelity(load_named("ivp", "Wave1D", PROJECT_ROOT), method, template, MACHINE, 576,
                        tmp_path)
    assert row["ivp"] == "Wave1D" and row["n"] == 576
    assert row["real_ns"] > 0 and row["form_ns"] > 0 and row["ecm_ns"] > 0
    assert row["real_over_form"] == pytest.approx(row["real_ns"] / row["form_ns"])
