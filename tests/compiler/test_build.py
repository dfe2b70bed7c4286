"""The build flags: a select against a literal bound (fmax in InverterChain) leaves its loop vectorised."""

import re
import subprocess
from pathlib import Path

from hybridtune.compiler.build import FLAGS, NATIVE, compiler
from hybridtune.describe.loader import load_named
from hybridtune.generate.ckernel import kernel_function


def test_select_of_a_bound_is_vectorised(default_scenario, radau7, tmp_path):
    ivp = load_named("ivp", "InverterChain", Path("."))
    code = kernel_function(default_scenario.template_map["RHS"], "RHS_lj", radau7, ivp, "k").code
    source = tmp_path / "k.c"
    source.write_text("#include <math.h>\n#include \"ht_runtime.h\"\n"
                      "static const double ht_c[4] = {0.1, 0.4, 0.8, 1.0};\n"
                      + code.replace("static void", "void", 1))    # kept though unused
    lines = source.read_text().splitlines()
    select_loop = next(i for i, line in enumerate(lines, 1) if "ivp_UT > 0.0 ?" in line
                       and "cos(" not in line) - 1      # the loop header above the statement
    assert lines[select_loop - 1].lstrip().startswith("for (long j")
    out = subprocess.run([compiler(), *FLAGS, "-I", str(NATIVE), "-fopt-info-vec-optimized", "-c",
                          "-o", str(tmp_path / "k.o"), str(source)],
                         capture_output=True, text=True, check=True).stderr
    vectorised = {int(m) for m in re.findall(r"k\.c:(\d+):\d+: optimized: loop vectorized", out)}
    assert select_loop in vectorised, out


def test_flags_the_compiler_rejects_are_named_with_its_own_words():
    from hybridtune.compiler.build import flags_problem
    assert flags_problem("gcc", "-O3 -march=x86-64-v2 -fopenmp") is None
    flag, words = flags_problem("gcc", "-O3 -march=znver9 -fopenmp")
    assert flag == "-march=znver9" and "znver9" in words and "error" in words
    flag, words = flags_problem("gcc", "-O3 -mno-such-extension")
    assert flag == "-mno-such-extension" and "unrecognized" in words
