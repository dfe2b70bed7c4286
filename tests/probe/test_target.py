"""The probe's compiler target: -march=native resolved from recorded and live `gcc -Q --help=target`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hybridtune.probe.machine_probe import GCC_FLAGS, compiler_entries
from hybridtune.probe.target import (FP_VECTOR, NAME_MAX, kerncraft_folder, kerncraft_target,
                                     portable_target, target_flags, target_help)

RECORDED = Path(__file__).resolve().parents[1] / "data" / "probe" / "gcc-target"
HOSTS = {       # recorded host: (gcc's name for its CPU, what -march=native becomes)
    "zen3-epyc": ("znver3", "-march=znver3 -mshstk -mno-mwaitx -mno-pku -mno-wbnoinvd"),
    "skylake-sp": ("skylake-avx512", "-march=skylake-avx512 -mno-pku -mno-sgx"),
    "sapphire-rapids": ("sapphirerapids", "-march=sapphirerapids -mno-enqcmd -mno-ptwrite "
                        "-mno-tsxldtrk -mno-waitpkg"),
    "zen2-epyc": ("znver2", "-march=znver2 -mno-mwaitx -mno-wbnoinvd"),
    "emerald-rapids": ("rocketlake", "-march=rocketlake -mabm -mamx-bf16 -mamx-int8 -mamx-tile "
                       "-mavx512bf16 -mavx512fp16 -mavxvnni -mcldemote -mclwb -mmovdir64b "
                       "-mmovdiri -mrtm -mserialize -mtsxldtrk -mno-pku"),
    "emerald-rapids-cooperlake": ("cooperlake", "-march=cooperlake -mabm -mamx-bf16 -mamx-int8 "
                                  "-mamx-tile -mavx512bitalg -mavx512fp16 -mavx512ifma "
                                  "-mavx512vbmi -mavx512vbmi2 -mavx512vpopcntdq -mavxvnni "
                                  "-mcldemote -mgfni -mmovdir64b -mmovdiri -mrdpid -mrtm "
                                  "-mserialize -msha -mtsxldtrk -mvaes -mvpclmulqdq -mno-pku "
                                  "-mno-sgx"),
    "zen4-gcc12": ("znver3", "-march=znver3 -mavx512bf16 -mavx512bitalg -mavx512bw -mavx512cd "
                   "-mavx512dq -mavx512f -mavx512ifma -mavx512vbmi -mavx512vbmi2 -mavx512vl "
                   "-mavx512vnni -mavx512vpopcntdq -mgfni -mshstk -mno-mwaitx -mno-pku "
                   "-mno-wbnoinvd"),
}


def recorded(host: str) -> tuple[str, str]:
    name = HOSTS[host][0]
    return ((RECORDED / f"native-{host}.txt").read_text(),
            (RECORDED / f"march-{name}.txt").read_text())


def enabled_by_gcc(flags: list) -> set:
    return target_flags(subprocess.run(["gcc", *flags, "-Q", "--help=target"], capture_output=True,
                                       text=True, check=True).stdout)[1]


def test_the_recorded_outputs_read_as_gcc_wrote_them():
    name, enabled = target_flags(recorded("zen3-epyc")[0])
    assert name == "znver3"
    assert {"-mavx2", "-mfma", "-mshstk"} <= enabled and "-mmwaitx" not in enabled
    assert target_flags("") == ("unknown", set())


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_native_resolves_to_the_cpus_name_and_its_differences(host):
    assert portable_target(*recorded(host)) == HOSTS[host][1]


def test_a_zen4_target_under_gcc12_is_longer_than_kerncraft_could_name_a_folder():
    target = HOSTS["zen4-gcc12"][1]
    assert len(target.split()) == 18 and len(GCC_FLAGS.format(target=target)) > 255


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_gcc_compiles_for_the_recorded_cpu_from_the_resolved_flags(host):
    """The resolved flags, given to gcc on this host, enable exactly what -march=native did there."""
    native, named = recorded(host)
    name = HOSTS[host][0]
    if target_flags(target_help(name))[1] != target_flags(named)[1]:
        pytest.skip(f"this gcc resolves -march={name} otherwise than the recorded gcc 12.2")
    assert enabled_by_gcc(portable_target(native, named).split()) == target_flags(native)[1]


def test_without_a_name_for_the_cpu_native_stays():
    unnamed = re.sub(r"(-march=\s+)znver3", r"\1native", recorded("zen3-epyc")[0])
    assert portable_target(unnamed, "") == "-march=native"
    assert portable_target("", "") == "-march=native"



# what the probe gives kerncraft where the whole target would make too long a folder name
SHORT = {"emerald-rapids-cooperlake": "-march=cooperlake -mno-pku -mno-sgx",
         "zen4-gcc12": "-march=znver3 -mavx512bw -mavx512cd -mavx512dq -mavx512f -mavx512vl "
                       "-mno-mwaitx -mno-pku -mno-wbnoinvd"}
LOOP = """double a[1000000], b[1000000], c[1000000];
double s;
void kernel(int n) {
    for (int i = 1; i < n - 1; ++i)
        a[i] = b[i] + s * c[i] + 0.25 * (b[i - 1] + b[i + 1]) * c[i];
}
"""


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_kerncraft_gets_the_whole_target_where_its_folder_name_fits(host):
    whole = HOSTS[host][1]
    fits = len(kerncraft_folder(GCC_FLAGS.format(target=whole)).encode()) <= NAME_MAX
    assert fits == (host not in SHORT)
    entries, notes = compiler_entries(whole)
    assert len(kerncraft_folder(entries["compiler"]["gcc"]).encode()) <= NAME_MAX
    if fits:
        assert entries == {"compiler": {"gcc": GCC_FLAGS.format(target=whole)}} and notes == []
    else:
        assert entries == {"compiler": {"gcc": GCC_FLAGS.format(target=SHORT[host])},
                           "hybridtune compiler": {"gcc": GCC_FLAGS.format(target=whole)}}
        assert SHORT[host] in notes[0] and "hybridtune compiler" in notes[0]


def test_the_short_form_gives_up_vector_extensions_last():
    whole = HOSTS["zen4-gcc12"][1]
    roomy = "{target}" + " -D_X=1" * 25       # leaves room for a target of 79 bytes
    assert kerncraft_target(whole, roomy) == "-march=znver3 -mno-mwaitx -mno-pku -mno-wbnoinvd"
    assert kerncraft_target(whole, "{target}" + " -D_X=1" * 40) == "-march=native"
    assert kerncraft_target("", GCC_FLAGS) == "-march=native"


@pytest.mark.parametrize("host", sorted(SHORT))
def test_the_short_form_runs_on_the_host_and_builds_the_same_loops(host, tmp_path):
    """gcc enables no extension the host lacks and every vector one it has, and a double-precision
    loop compiles to the same instructions as with the whole target."""
    native, named = recorded(host)
    if target_flags(target_help(HOSTS[host][0]))[1] != target_flags(named)[1]:
        pytest.skip(f"this gcc resolves -march={HOSTS[host][0]} otherwise than the recorded gcc 12.2")
    short = kerncraft_target(portable_target(native, named), GCC_FLAGS)
    assert short == SHORT[host]
    enabled, host_has = enabled_by_gcc(short.split()), target_flags(native)[1]
    assert enabled <= host_has and host_has & set(FP_VECTOR) <= enabled
    source = tmp_path / "loop.c"
    source.write_text(LOOP)
    assembly = []
    for target in (HOSTS[host][1], short):
        out = tmp_path / f"{len(assembly)}.s"
        subprocess.run(["gcc", *GCC_FLAGS.format(target=target).split(), "-S", str(source),
                        "-o", str(out)], check=True)
        assembly.append(out.read_text())
    assert assembly[0] == assembly[1] and "fma" in assembly[0]
