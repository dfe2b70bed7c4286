"""The exported libraries' API: names carrying --name so that two tuned libraries link into one program, each integrating its own IVP; the stable step and the sizes the IVP takes in C."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from hybridtune.commands.main import main
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from hybridtune.reference.pirk import solve
from hybridtune.solver import Solver, TunedSolver
from export_support import GROUND_TRUTH, METHOD, SCENARIO, exported, linked

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "chain.h"
#include "wave.h"
/* main N STEPS: each library's choice, stable step and state after STEPS steps, one after the
 * other; then what each create answers to a size its IVP does not take. */
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int steps = atoi(argv[2]);
    double h = chain_stable_step(n);
    chain_ctx *a = chain_create_threads(n, 1);
    if (!a) return 1;
    chain_initial_values(a);
    for (int k = 0; k < steps; ++k) chain_step(a, k * h, h);
    printf("%s %.17g\n", chain_chosen_variant(a), h);
    for (long j = 0; j < n; ++j) printf("%.17g\n", chain_state(a)[j]);
    chain_destroy(a);
    h = wave_stable_step(n);
    wave_ctx *b = wave_create_threads(n, 1);
    if (!b) return 1;
    wave_initial_values(b);
    for (int k = 0; k < steps; ++k) wave_step(b, k * h, h);
    printf("%s %.17g\n", wave_chosen_variant(b), h);
    for (long j = 0; j < n; ++j) printf("%.17g\n", wave_state(b)[j]);
    wave_destroy(b);
    printf("%d %d %d %d %g\n", wave_create(5) == NULL, wave_valid_n(5), chain_create(0) == NULL,
           chain_create_threads(600, 0) == NULL, wave_stable_step(5));
    return 0;
}
"""


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """Tuned libraries of InverterChain (chain) and Wave1D (wave), built by their Makefiles."""
    root = tmp_path_factory.mktemp("two")
    for name, ivp in (("chain", "InverterChain"), ("wave", "Wave1D")):
        exported(root, ivp, name)
    return root


@pytest.mark.parametrize("linked", ["static", "shared"])
def test_two_tuned_libraries_link_into_one_program_and_each_integrates_its_own_ivp(
        libraries, tmp_path, linked):
    program = tmp_path / "main.c"
    program.write_text(PROGRAM)
    libs = [str(libraries / name / f"lib{name}.a") for name in ("chain", "wave")] \
        if linked == "static" else \
        [f"{flag}{libraries / name}" for name in ("chain", "wave")
         for flag in ("-L", "-Wl,-rpath,")] + ["-lchain", "-lwave"]
    exe = tmp_path / "main"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-I", str(libraries / "chain"), "-I",
                    str(libraries / "wave"), str(program), *libs, "-lm", "-o", str(exe)],
                   check=True)
    n, steps = 600, 4
    lines = subprocess.run([str(exe), str(n), str(steps)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    scenario = load(SCENARIO, "scenario")
    method = next(m for m in scenario.methods if m.name == METHOD)
    ivps = {i.name: i for i in scenario.ivps}
    for block, (name, ivp) in enumerate((("chain", "InverterChain"), ("wave", "Wave1D"))):
        head = lines[block * (n + 1)].split()
        table = json.loads((libraries / name / f"{name}.json").read_text())
        assert head[0] in table["variants"]
        h = float(head[1])
        assert h == ivps[ivp].step_size(n)
        y = np.array([float(x) for x in lines[block * (n + 1) + 1:(block + 1) * (n + 1)]])
        want = solve(method, ivps[ivp], n, 0.0, steps * h, steps)
        assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want)), name
    assert lines[-1].split() == ["1", "0", "1", "1", "0"]


def test_every_public_symbol_carries_the_name(libraries):
    symbols = subprocess.run(["nm", "-g", "--defined-only", str(libraries / "wave" / "libwave.so")],
                             capture_output=True, text=True, check=True).stdout.split()
    defined = [s for s in symbols if not s.startswith("_") and s[0].isalpha() and len(s) > 1]
    assert "wave_create" in defined and "wave_stable_step" in defined
    assert all(s.startswith("wave_") for s in defined), defined
    header = (libraries / "wave" / "wave.h").read_text()
    assert "ht_" not in header.split("#ifndef")[1]
    assert "1 where Wave1D takes n: n >= 9" in header


def test_the_makefile_builds_with_the_compiler_named_and_with_gcc_by_default(libraries):
    plan = subprocess.run(["make", "-n", "-B", "-C", str(libraries / "wave")],
                          capture_output=True, text=True, check=True).stdout
    assert plan.splitlines()[1].startswith("gcc ")
    plan = subprocess.run(["make", "-n", "-B", "-C", str(libraries / "wave"), "CC=clang"],
                          capture_output=True, text=True, check=True).stdout
    assert plan.splitlines()[1].startswith("clang ")


def test_python_loads_a_tuned_library_and_integrates_as_its_c_does(libraries):
    scenario = load(SCENARIO, "scenario")
    method = next(m for m in scenario.methods if m.name == METHOD)
    ivp = next(i for i in scenario.ivps if i.name == "Wave1D")
    with TunedSolver(libraries / "wave", 600, threads=1) as solver:
        table = json.loads((libraries / "wave" / "wave.json").read_text())
        assert solver.chosen_variant in table["variants"] and solver.chosen_threads == 1
        assert solver.stable_step == ivp.step_size(600)
        y = solver.integrate(0.0, 4 * solver.stable_step, 4)
    want = solve(method, ivp, 600, 0.0, 4 * ivp.step_size(600), 4)
    assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want))
    with pytest.raises(RequestError, match=r"n = 5 is not valid.*wave_valid_n"):
        TunedSolver(libraries / "wave", 5)
    with pytest.raises(RequestError, match="make -C"):
        TunedSolver(libraries, 600)


def test_a_variant_export_carries_its_name_and_python_loads_it(tmp_path):
    variant = "F_RHS_LC_predictor_jil_RHS_LC_jli_RHS_Approx_Update_ij"
    assert main(["export", SCENARIO, "--variant", variant, "--method", METHOD, "--ivp", "Wave1D",
                 "-o", str(tmp_path / "one")]) == 0
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == \
        ["Makefile", "ht_wave1d.c", "ht_wave1d.h"]
    subprocess.run(["make", "-s", "-C", str(tmp_path / "one")], check=True, capture_output=True)
    solver = TunedSolver(tmp_path / "one", 600, threads=1)
    assert solver.chosen_variant == variant and solver.name == "ht_wave1d"
    compiled = Solver(variant, METHOD, "Wave1D", 600, threads=1, scenario=SCENARIO)
    h = solver.stable_step
    assert np.array_equal(solver.integrate(0.0, 3 * h, 3), compiled.integrate(0.0, 3 * h, 3))
    with pytest.raises(RequestError, match="not valid"):
        TunedSolver(tmp_path / "one", 8)


def test_the_documented_program_builds_and_integrates_its_ivp(tmp_path):
    doc = (PROJECT_ROOT / "docs" / "tuned-solver.md").read_text()
    program = doc.split("```c\n")[1].split("```")[0]
    command = next(line.strip()[2:] for line in doc.splitlines()
                   if line.strip().startswith("$ gcc"))
    assert main(["export", SCENARIO, "--tuned", "--method", METHOD, "--ivp", "Wave1D", "--db",
                 str(GROUND_TRUTH), "-o", str(tmp_path / "wave")]) == 0
    subprocess.run(["make", "-s", "-C", str(tmp_path / "wave")], check=True, capture_output=True)
    (tmp_path / "main.c").write_text(program)
    subprocess.run(command, shell=True, cwd=tmp_path, check=True)
    done = subprocess.run(["./main", "600", "20"], cwd=tmp_path, capture_output=True, text=True,
                          check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    norm = float(done.stdout.split("= ")[-1])
    ivp = next(i for i in load(SCENARIO, "scenario").ivps if i.name == "Wave1D")
    method = next(m for m in load(SCENARIO, "scenario").methods if m.name == METHOD)
    h = ivp.step_size(600)
    want = solve(method, ivp, 600, 0.0, 20 * h, 20)
    assert norm == pytest.approx(float(want @ want), rel=1e-12)
    refused = subprocess.run(["./main", "5"], cwd=tmp_path, capture_output=True, text=True)
    assert refused.returncode == 2 and "does not take n = 5" in refused.stderr


ADAPTIVE = r"""
#include <stdio.h>
#include <stdlib.h>
#include "wave.h"
/* main N STEPS ADAPT: what the context ran after STEPS steps, then the state */
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int steps = atoi(argv[2]);
    double h = wave_stable_step(n);
    wave_ctx *c = wave_create_options(n, 1, atoi(argv[3]) ? WAVE_ADAPT : 0);
    if (!c) return 1;
    wave_initial_values(c);
    for (int k = 0; k < steps; ++k) wave_step(c, k * h, h);
    printf("%s %d %d\n", wave_chosen_variant(c), wave_chosen_candidates(c), wave_chosen_adapting(c));
    for (long j = 0; j < n; ++j) printf("%.17g\n", wave_state(c)[j]);
    wave_destroy(c);
    return 0;
}
"""


@pytest.fixture(scope="module")
def adaptive(tmp_path_factory):
    """Wave1D's tuned library with three candidates per measured range, and a program on it."""
    root = tmp_path_factory.mktemp("adaptive")
    linked(root, ADAPTIVE, exported(root, "Wave1D", "wave", "--candidates", "3"))
    return root


def _adaptive_run(root, steps: int, adapt: int, **env):
    done = subprocess.run([str(root / "main"), "600", str(steps), str(adapt)], capture_output=True,
                          text=True, check=True, env={**os.environ, **env})
    lines = done.stdout.splitlines()
    variant, candidates, adapting = lines[0].split()
    return variant, int(candidates), int(adapting), np.array([float(x) for x in lines[1:]]), done


@pytest.mark.parametrize("steps", [10, 60])
def test_an_adaptive_library_times_its_candidates_on_the_one_state(adaptive, steps, tmp_path):
    table = json.loads((adaptive / "wave" / "wave.json").read_text())
    rule = next(r for r in table["rules"] if r["threads"] == 1 and r["n_low"] <= 600
                and (r["n_high"] is None or 600 < r["n_high"]))
    options = [c["variant"] for c in rule["candidates"]]
    assert len(options) == 3 and options[0] == rule["variant"]
    report = tmp_path / "report.jsonl"
    variant, candidates, adapting, y, _ = _adaptive_run(adaptive, steps, 1,
                                                        HYBRIDTUNE_REPORT=str(report))
    # 3 candidates x 5 rounds x 3 steps a turn: settled after 45 steps
    assert (candidates, adapting) == (3, int(steps < 45))
    assert variant in options and (steps >= 45 or variant == options[0])
    scenario = load(SCENARIO, "scenario")
    method = next(m for m in scenario.methods if m.name == METHOD)
    ivp = next(i for i in scenario.ivps if i.name == "Wave1D")
    want = solve(method, ivp, 600, 0.0, steps * ivp.step_size(600), steps)
    assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want))
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert {line["variant"] for line in lines} <= set(options)
    assert [line["kept"] for line in lines].count(True) == (steps >= 45)
    turns_first = min(steps // 3 + 1, 15)          # a turn's first step is not counted
    assert sum(line["steps"] for line in lines) == steps - turns_first
    assert all(line["code_sha256"] != "" and line["median_s"] > 0 for line in lines)


def test_adaptation_is_off_by_default_and_on_by_the_environment(adaptive):
    assert _adaptive_run(adaptive, 5, 0)[1] == 1
    assert _adaptive_run(adaptive, 5, 0, HYBRIDTUNE_ADAPT="1")[1] == 3


def test_a_report_that_cannot_be_written_is_named_once_and_the_run_goes_on(adaptive, tmp_path):
    *_, y, done = _adaptive_run(adaptive, 60, 1,
                                HYBRIDTUNE_REPORT=str(tmp_path / "missing" / "r.jsonl"))
    assert done.stderr.count("cannot append to HYBRIDTUNE_REPORT") == 1
    assert np.all(np.isfinite(y))


def test_candidates_out_of_range_or_without_tuned_are_refused(tmp_path, capsys):
    base = ["export", SCENARIO, "--method", METHOD, "--ivp", "Wave1D", "-o", str(tmp_path / "x")]
    for count in ("0", "9"):
        assert main([*base, "--tuned", "--db", str(GROUND_TRUTH), "--candidates", count]) == 2
        assert f"--candidates: expected a count from 1 to 8, got {count}" in capsys.readouterr().err
    assert main([*base, "--variant", "F_RHS_LC_predictor_jil_RHS_LC_jli_RHS_Approx_Update_ij",
                 "--candidates", "2"]) == 2
    assert "--candidates goes with --tuned" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_one_candidate_named_in_the_environment_runs_alone(adaptive):
    table = json.loads((adaptive / "wave" / "wave.json").read_text())
    rule = next(r for r in table["rules"] if r["threads"] == 1 and r["n_low"] <= 600
                and (r["n_high"] is None or 600 < r["n_high"]))
    second = rule["candidates"][1]["variant"]
    variant, candidates, adapting, *_ = _adaptive_run(adaptive, 5, 1, HYBRIDTUNE_VARIANT=second)
    assert (variant, candidates, adapting) == (second, 1, 0)
    refused = subprocess.run([str(adaptive / "main"), "600", "5", "0"], capture_output=True,
                             env={**os.environ, "HYBRIDTUNE_VARIANT": "no_such_variant"})
    assert refused.returncode == 1          # the program's answer to a NULL context
