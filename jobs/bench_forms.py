"""Benchmark of the kerncraft forms' fidelity: each paper IVP's RHS as generated against its form.

Per IVP, at one n whose RHS working set fits L1, three times per component evaluation: the generated
RHS kernel (built with the project's flags, and again with -ftrapping-math, gcc's default), the loops
of its kerncraft form compiled and timed alone (what kerncraft analyses), and kerncraft's ECM
prediction of those loops from a machine file. real / form says whether the form is the code that
runs; form / ECM whether the in-core and transfer model predicts that code. All builds and runs are
sequential on one core; each time is the best of 7 rounds of at least 20 ms.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sympy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hybridtune.compiler.build import FLAGS, build  # noqa: E402
from hybridtune.describe.library import host_machine_file  # noqa: E402
from hybridtune.describe.loader import load_named  # noqa: E402
from hybridtune.generate.ckernel import kernel_function  # noqa: E402
from hybridtune.generate.kerncraft_form import kerncraft_form  # noqa: E402
from hybridtune.generate.size_expressions import N  # noqa: E402
from hybridtune.predict.kerncraft_adapter import analyse  # noqa: E402
from hybridtune.probe.host_facts import read_host_facts  # noqa: E402

IVPS = ("Cusp", "InverterChain", "Medakzo", "Wave1D", "Heat2D")
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
    c = ", ".join(repr(float(x)) for x in method.c)
    s = method.stages
    return "\n".join([
        "#include <math.h>", '#include "ht_runtime.h"', TIMER,
        f"static const double ht_c[{s}] = {{{c}}};",
        code,
        f"static double Y[{s * n}], F[{s * n}];",
        f"static void call(void) {{ rhs_kernel({n}, 0, {n}, 0.5, 1e-3, Y, F); "
        "__asm__ volatile(\"\" ::: \"memory\"); }",
        f"int main(void) {{ {_fill('Y', str(s * n))}",
        '  printf("%.9e\\n", ht_best_per_call(call)); return 0; }'])


def form_program(code: str, defines: dict) -> str:
    head, loop = code.split("for (", 1)
    arrays = re.findall(r"^double (a\d+)((?:\[[^\]]+\])+);", head, re.MULTILINE)
    scalars = re.findall(r"^double ([sk]\d+);", head, re.MULTILINE)
    return "\n".join(
        [TIMER] + [f"#define {k} {v}" for k, v in defines.items()]
        + [f"static double {a}{dims};" for a, dims in arrays]
        # scalars come from volatile storage: opaque to the compiler, as in kerncraft's own build
        + [f"volatile double v_{name} = {0.37 + 0.01 * i!r};" for i, name in enumerate(scalars)]
        + ["static void call(void) {"] + [f"  double {name} = v_{name};" for name in scalars]
        + ["  for (" + loop.rstrip(), '  __asm__ volatile("" ::: "memory");', "}",
           "int main(void) {"]
        + [f"  {_fill('((double *)' + a + ')', f'sizeof({a}) / sizeof(double)')}" for a, _ in arrays]
        + ['  printf("%.9e\\n", ht_best_per_call(call)); return 0; }'])


def run_program(name: str, source: str, extra_flags: tuple = ()) -> float:
    built = build(name, {f"{name}.c": source}, shared=False, extra_flags=extra_flags)
    if not built.ok:
        sys.exit(f"{name}: build failed: {built.message[-2000:]}")
    return float(subprocess.run([str(built.path)], capture_output=True, text=True,
                                check=True).stdout)


def clock_hz(machine: Path) -> float:
    match = re.search(r"^clock:\s*([\d.]+)\s*GHz", machine.read_text(), re.MULTILINE)
    return float(match.group(1)) * 1e9


def bench_ivp(name: str, method, template, machine: Path, n: int, work: Path) -> dict:
    ivp = load_named("ivp", name, ROOT)
    env = ivp.environment(n)
    code = kernel_function(template, "RHS_lj", method, ivp, "rhs_kernel").code
    evaluations = method.stages * n
    real = run_program(f"rhs_{name}", real_program(code, method, n)) / evaluations
    trapping = run_program(f"rhs_{name}", real_program(code, method, n),
                           ("-ftrapping-math",)) / evaluations
    form = kerncraft_form(template, "RHS_lj", method, ivp)
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
            sys.exit(f"{name} part {number}: kerncraft failed: {result.message}")
        cycles = result.cycles_per_cl[0] / result.iterations_per_cl
        predicted += cycles / clock_hz(machine) * iterations * part.calls
    measured /= evaluations
    predicted /= evaluations
    return {"ivp": name, "n": n, "real_ns": real * 1e9, "real_trapping_math_ns": trapping * 1e9,
            "form_ns": measured * 1e9, "ecm_ns": predicted * 1e9,
            "real_over_form": real / measured, "form_over_ecm": measured / predicted,
            "real_over_ecm": real / predicted, "trapping_math_over_real": trapping / real,
            "omitted_blocks": len(form.omitted)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=576, help="system size (576 = 24 x 24 suits every "
                        "paper IVP; the RHS reads and writes 4 stages x 2 vectors of it)")
    parser.add_argument("--machine", type=Path, help="kerncraft machine file (default: host)")
    parser.add_argument("--output", type=Path, default=ROOT / "data" / "bench" / "forms.json")
    args = parser.parse_args()
    machine = args.machine or host_machine_file()[0]
    method = load_named("method", "radauIIA7", ROOT)
    template = load_named("kernel", "RHS", ROOT)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [bench_ivp(name, method, template, machine, args.n, Path(tmp)) for name in IVPS]
    result = {"command": "jobs/bench_forms.sh " + " ".join(sys.argv[1:]), "started": started,
              "host": platform.node(), "cpu": read_host_facts().model_name, "machine_file": str(machine),
              "flags": " ".join(FLAGS), "n": args.n, "ivps": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print("| IVP | generated RHS ns | with -ftrapping-math | form ns | ECM ns | real / form | "
          "form / ECM |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['ivp']} | {r['real_ns']:.3f} | {r['real_trapping_math_ns']:.3f} | "
              f"{r['form_ns']:.3f} | {r['ecm_ns']:.3f} | {r['real_over_form']:.2f} | "
              f"{r['form_over_ecm']:.2f} |")
    print(f"per component evaluation, n = {args.n}; written to {args.output}")


if __name__ == "__main__":
    main()
