"""Whether the kerncraft form is the code that runs: the generated RHS, its form and ECM, per call.

At one n, per component evaluation: the generated RHS kernel built with the project's flags and
again with -ftrapping-math (gcc's default), the loops of its kerncraft form compiled and timed
alone with their scalars opaque (as kerncraft sees them), and kerncraft's ECM prediction of those
loops from a machine file. Each time is the best of 7 rounds of at least 20 ms, one core.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import sympy

from hybridtune.compiler.build import build
from hybridtune.describe.loader import load
from hybridtune.errors import HybridtuneError
from hybridtune.generate.ckernel import kernel_function
from hybridtune.generate.kerncraft_form import kerncraft_form
from hybridtune.generate.size_expressions import N
from hybridtune.predict.kerncraft_adapter import analyse

TIMER = r"""
#include <stdio.h>
#include "ht_timing.h"
static double ht_best_per_call(void (*call)(void)) {
    long reps = 1;
    for (;;) { double t0 = now(); for (long k = 0; k < reps; ++k) call();
               if (now() - t0 > 0.02) break; reps *= 2; }
    double best = 1e30;
    for (int r = 0; r < 7; ++r) { double t0 = now(); for (long k = 0; k < reps; ++k) call();
                                  double dt = (now() - t0) / reps; if (dt < best) best = dt; }
    return best;
}
"""


def _fill(name: str, count: str) -> str:
    """Values spread over [0, 2), so a select against a bound of 1 goes both ways."""
    return f"for (long i = 0; i < {count}; ++i) {name}[i] = (double)((i * 7919) % 1000) / 500.0;"


def real_program(code: str, method, n: int) -> str:
    """A program timing the generated RHS kernel on s stages of n components."""
    c = ", ".join(repr(float(x)) for x in method.c)
    s = method.stages
    return "\n".join([
        "#include <math.h>", '#include "ht_runtime.h"', TIMER,
        f"static const double ht_c[{s}] = {{{c}}};", code,
        f"static double Y[{s * n}], F[{s * n}];",
        f"static void call(void) {{ rhs_kernel({n}, 0, {n}, 0.5, 1e-3, Y, F); "
        "__asm__ volatile(\"\" ::: \"memory\"); }",
        f"int main(void) {{ {_fill('Y', str(s * n))}",
        '  printf("%.9e\\n", ht_best_per_call(call)); return 0; }'])


def form_program(code: str, defines: dict) -> str:
    """A program timing one loop of a kerncraft form, its scalars read from volatile storage:
    opaque to the compiler, as in kerncraft's own build."""
    head, loop = code.split("for (", 1)
    arrays = re.findall(r"^double (a\d+)((?:\[[^\]]+\])+);", head, re.MULTILINE)
    scalars = re.findall(r"^double ([sk]\d+);", head, re.MULTILINE)
    return "\n".join(
        [TIMER] + [f"#define {k} {v}" for k, v in defines.items()]
        + [f"static double {a}{dims};" for a, dims in arrays]
        + [f"volatile double v_{name} = {0.37 + 0.01 * i!r};" for i, name in enumerate(scalars)]
        + ["static void call(void) {"] + [f"  double {name} = v_{name};" for name in scalars]
        + ["  for (" + loop.rstrip(), '  __asm__ volatile("" ::: "memory");', "}",
           "int main(void) {"]
        + [f"  {_fill('((double *)' + a + ')', f'sizeof({a}) / sizeof(double)')}" for a, _ in arrays]
        + ['  printf("%.9e\\n", ht_best_per_call(call)); return 0; }'])


def run_program(name: str, source: str, extra_flags: tuple = ()) -> float:
    """Build and run a timing program: the seconds per call it prints."""
    built = build(name, {f"{name}.c": source}, shared=False, extra_flags=extra_flags)
    if not built.ok:
        raise HybridtuneError(f"{name}: build failed: {built.message[-2000:]}")
    return float(subprocess.run([str(built.path)], capture_output=True, text=True,
                                check=True).stdout)


def _form_times(name: str, form, ivp, n: int, machine: Path, work: Path) -> tuple[float, float]:
    """The form's loops timed and predicted by ECM: seconds per step of the RHS, both."""
    env = ivp.environment(n)
    clock_hz = load(machine, "machine").clock_hz
    measured = predicted = 0.0
    for number, part in enumerate(form.parts):
        defines = {d: int(n if d == "n" else env[d[len("ivp_"):]]) for d in part.defines}
        iterations = float(sympy.sympify(part.iterations).subs(N, n))
        # a loop may stand for several runs of itself (a grid's rows): time per iteration it runs
        trip = float(sympy.sympify(re.search(r"j < ([^;]+);", part.code).group(1)).subs(defines))
        per_iteration = run_program(f"form_{name}_{number}", form_program(part.code, defines)) / trip
        measured += per_iteration * iterations * part.calls
        result = analyse(part.code, str(work / f"{name}_{number}"), str(machine),
                         ((n, defines),))[0]
        if result.status != "ok":
            raise HybridtuneError(f"{name} part {number}: kerncraft failed: {result.message}")
        cycles = result.cycles_per_cl[0] / result.iterations_per_cl
        predicted += cycles / clock_hz * iterations * part.calls
    return measured, predicted


def form_fidelity(ivp, method, template, machine: Path, n: int, work: Path) -> dict:
    """The generated RHS, its form and ECM in ns per component evaluation, and their ratios."""
    code = kernel_function(template, "RHS_lj", method, ivp, "rhs_kernel").code
    evaluations = method.stages * n
    real = run_program(f"rhs_{ivp.name}", real_program(code, method, n)) / evaluations
    trapping = run_program(f"rhs_{ivp.name}", real_program(code, method, n),
                           ("-ftrapping-math",)) / evaluations
    form = kerncraft_form(template, "RHS_lj", method, ivp)
    measured, predicted = (t / evaluations for t in _form_times(ivp.name, form, ivp, n, machine,
                                                                 work))
    return {"ivp": ivp.name, "n": n, "real_ns": real * 1e9, "real_trapping_math_ns": trapping * 1e9,
            "form_ns": measured * 1e9, "ecm_ns": predicted * 1e9,
            "real_over_form": real / measured, "form_over_ecm": measured / predicted,
            "real_over_ecm": real / predicted, "trapping_math_over_real": trapping / real,
            "omitted_blocks": len(form.omitted)}
