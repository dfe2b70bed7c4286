"""The tuned solver as a Python object, `solve --variant`, and the exported C solver built with make."""

import json
import subprocess

import numpy as np
import pytest

from hybridtune.commands.main import main
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.errors import RequestError
from hybridtune.reference.pirk import solve
from hybridtune.solver import Solver

VARIANT = "E_RHS_LC_predictor_jil_RHS_LC_jli_RHS_Approx_ji_Update_j"


def test_solver_matches_the_reference():
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    ivp = load_named("ivp", "Medakzo", PROJECT_ROOT)
    h = ivp.step_size(100)
    with Solver(VARIANT, method, ivp, 100, threads=2) as solver:
        y = solver.integrate(0.0, 20 * h, 20)
        again = solver.integrate(0.0, 20 * h, 20, y0=None)
        from_y = solver.integrate(20 * h, 40 * h, 20, y0=y)
    want = solve(method, ivp, 100, 0.0, 20 * h, 20)
    assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want))
    assert np.array_equal(y, again)
    want_40 = solve(method, ivp, 100, 0.0, 40 * h, 40)
    assert np.max(np.abs(from_y - want_40)) <= 1e-12 * np.max(np.abs(want_40))


def test_solver_bad_requests():
    with pytest.raises(RequestError, match="unknown variant"):
        Solver("Z_nothing", "radauIIA7", "Cusp", 30)
    with pytest.raises(RequestError, match="multiple of 3"):
        Solver(VARIANT, "radauIIA7", "Cusp", 31)
    with Solver(VARIANT, "radauIIA7", "Cusp", 30) as solver:
        with pytest.raises(RequestError, match="30 components"):
            solver.integrate(0.0, 1e-6, 1, y0=np.zeros(29))


def test_solve_with_a_variant_prints_the_reference_result(capsys):
    argv = ["solve", "--method", "radauIIA7", "--ivp", "Wave1D", "-n", "100", "--t1", "5.0",
            "--steps", "10", "--json"]
    assert main(argv) == 0
    reference = json.loads(capsys.readouterr().out)
    assert main(argv + ["--variant", VARIANT, "--threads", "2"]) == 0
    compiled = json.loads(capsys.readouterr().out)
    assert compiled["variant"] == VARIANT and reference["variant"] == "reference"
    assert compiled["norm2"] == pytest.approx(reference["norm2"], rel=1e-13)


def test_export_builds_and_runs_in_user_code(capsys, tmp_path):
    out = tmp_path / "solver"
    assert main(["export", str(PROJECT_ROOT / "scenarios/default.yaml"), "--variant", VARIANT,
                 "--ivp", "IC", "-o", str(out), "--name", "ic_solver"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["Makefile", "ic_solver.c", "ic_solver.h"]
    subprocess.run(["make", "-s", "-C", str(out)], check=True, capture_output=True)
    driver = tmp_path / "main.c"
    driver.write_text("""
#include <stdio.h>
#include "ic_solver.h"
int main(void) {
    ic_solver_ctx *c = ic_solver_create(50);
    ic_solver_initial_values(c);
    for (int k = 0; k < 40; ++k) ic_solver_step(c, k * 2.5e-4, 2.5e-4);
    double *y = ic_solver_state(c);
    for (int j = 0; j < 50; ++j) printf("%.17g\\n", y[j]);
    ic_solver_destroy(c);
    return 0;
}
""")
    exe = tmp_path / "main"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-I", str(out), str(driver), str(out / "libic_solver.a"),
                    "-lm", "-o", str(exe)], check=True)
    y = np.array([float(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                                   check=True).stdout.split()])
    want = solve(load_named("method", "radauIIA7", PROJECT_ROOT),
                 load_named("ivp", "IC", PROJECT_ROOT), 50, 0.0, 40 * 2.5e-4, 40)
    assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want))


def test_export_needs_a_method_and_ivp_when_ambiguous(capsys, tmp_path):
    code = main(["export", str(PROJECT_ROOT / "scenarios/default.yaml"), "--variant", VARIANT,
                 "-o", str(tmp_path / "x")])
    assert code == 2 and "the scenario has 4 ivps" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
