"""A variant's code cut into the files built apart: a kernel's file is the same in every variant
that calls it, and the files together say what the one file says."""

from pathlib import Path

from hybridtune.describe.loader import load_named
from hybridtune.generate.cvariant import HIDDEN, compile_units, generate_variant
from hybridtune.generate.pool import select_variants


def _generated(scenario, method, ivp_name, count=2):
    ivp = load_named("ivp", ivp_name, Path("."))
    skeletons = {s.name: s for s in scenario.skeletons}
    variants = [v for v in select_variants(scenario, method, None) if v.skeleton == "B"][:count]
    return [generate_variant(v, skeletons[v.skeleton], scenario.template_map, method, ivp)
            for v in variants]


def test_each_kernel_is_a_file_of_its_own_shared_by_the_variants_that_call_it(default_scenario,
                                                                              radau7):
    first, second = _generated(default_scenario, radau7, "InverterChain")
    units, other = compile_units(first.code), compile_units(second.code)
    kernels = {name for name in units if name != "variant.c"}
    assert kernels == {f"k_{kernel}.c" for _, kernel in
                       select_variants(default_scenario, radau7, [first.variant_id])[0].kernels}
    shared = kernels & set(other)
    assert shared and all(units[name] == other[name] for name in shared)
    assert units["variant.c"] != other["variant.c"]
    main = units["variant.c"].split("\n")
    for name in kernels:
        function = name[:-2]
        assert f"{HIDDEN} void {function}(" in units[name]            # hidden, not static
        assert f"static void {function}(" in first.code
        prototype = next(line for line in main if f" {function}(" in line and HIDDEN in line)
        assert prototype.endswith(");")                                 # declared, not defined
        body = first.code.split(f"static void {function}(")[1].split("\n}\n")[0]
        assert body in units[name] and body not in units["variant.c"]
    assert "void ht_step(" in units["variant.c"] and not any(
        "ht_step" in units[name] or "struct ht_ctx" in units[name] for name in kernels)


def test_code_of_another_shape_is_one_file(default_scenario, radau7):
    code = _generated(default_scenario, radau7, "Cusp", count=1)[0].code
    assert len(compile_units(code)) > 1
    for other in (code.replace("struct ht_ctx {", "struct ht_context {"),
                  "int f(void) { return 1; }\n"):
        assert compile_units(other) == {"variant.c": other}
