"""A variant's code cut into the files built apart: a kernel's file is the same in every variant
that uses it, and the files together say what the one file says."""

from pathlib import Path

from hybridtune.describe.loader import load_named
from hybridtune.generate.cvariant import compile_units, generate_variant
from hybridtune.generate.pool import select_variants


def _generated(scenario, method, ivp_name, count=2):
    ivp = load_named("ivp", ivp_name, Path("."))
    skeletons = {s.name: s for s in scenario.skeletons}
    variants = [v for v in select_variants(scenario, method, None) if v.skeleton == "B"][:count]
    return [generate_variant(v, skeletons[v.skeleton], scenario.template_map, method, ivp)
            for v in variants]


def test_each_kernel_is_a_file_of_its_own_shared_by_the_variants_that_use_it(default_scenario,
                                                                              radau7):
    first, second = _generated(default_scenario, radau7, "InverterChain")
    units, other = compile_units(first.code), compile_units(second.code)
    kernels = {name for name in units if name != "variant.c"}
    assert kernels == {f"k_{kernel}.c" for _, kernel in
                       select_variants(default_scenario, radau7, [first.variant_id])[0].kernels}
    shared = kernels & set(other)
    assert shared and all(units[name] == other[name] for name in shared)
    assert units["variant.c"] != other["variant.c"]
    for name in kernels:      # hidden, not static: the step's file calls it
        assert f"HT_KERNEL void {name[:-2]}(" in units[name]
        assert units[name].startswith('#define HT_KERNEL __attribute__((visibility("hidden")))')
        assert f"HT_KERNEL void {name[:-2]}(" in units["variant.c"]          # its prototype
        assert "{" not in units["variant.c"].split(f"HT_KERNEL void {name[:-2]}(")[1].split(
            "\n")[0]
    assert "void ht_step(" in units["variant.c"] and not any(
        "ht_step" in units[name] for name in kernels)


def test_the_one_file_keeps_its_kernels_static_and_unmarked_code_is_one_file(default_scenario,
                                                                             radau7):
    generated = _generated(default_scenario, radau7, "Cusp", count=1)[0]
    assert "#define HT_KERNEL static" in generated.code
    lines = generated.code.split("\n")
    body = sum(len(text.split("\n")) for text in compile_units(generated.code).values())
    assert body > len(lines)           # the shared lines are in every file
    plain = "\n".join(line for line in lines if not line.startswith("/* ht: "))
    assert compile_units(plain) == {"variant.c": plain}
