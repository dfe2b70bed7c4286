"""The build: a select against a literal bound stays vectorised; a unit two libraries share compiles once."""

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


def test_a_unit_shared_by_two_libraries_is_compiled_once(tmp_path, monkeypatch):
    from hybridtune.compiler.build import build_linked, cache_dir, is_linked
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    shared = '__attribute__((visibility("hidden"))) double twice(double x) { return 2 * x; }\n'
    decl = '__attribute__((visibility("hidden"))) double twice(double x);\n'
    first = {"twice.c": shared, "main.c": decl + "double f(double x) { return twice(x) + 1; }\n"}
    second = {"twice.c": shared, "main.c": decl + "double f(double x) { return twice(x) - 1; }\n"}
    built = build_linked("lib", first, "/* one */\n")
    assert built.ok and not built.cached and is_linked("lib", first)
    assert built.source.read_text() == "/* one */\n"          # the whole code beside the library
    assert not is_linked("lib", second)
    folders = set(cache_dir().iterdir())
    assert len(folders) == 3                                   # two objects and the library
    assert build_linked("lib", second, "/* two */\n").ok
    new = set(cache_dir().iterdir()) - folders
    assert len(new) == 2                                       # its own object and library only
    assert build_linked("lib", first, "/* one */\n").cached
    out = subprocess.run(["nm", "-D", str(built.path)], capture_output=True, text=True).stdout
    assert " T f\n" in out and "twice" not in out              # hidden: not interposable


def test_a_unit_that_does_not_compile_names_its_file(tmp_path, monkeypatch):
    from hybridtune.compiler.build import build_linked
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path / "cache"))
    built = build_linked("lib", {"bad.c": "int f( {\n", "main.c": "int g(void) { return 1; }\n"},
                         "/* whole */\n")
    assert not built.ok and built.path is None
    assert built.source.name == "bad.c" and "bad.c" in built.message and "error" in built.message
