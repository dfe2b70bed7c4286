"""The probe's compiler target: -march=native resolved from recorded and live `gcc -Q --help=target`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hybridtune.probe.probe import GCC_FLAGS
from hybridtune.probe.target import portable_target, target_flags, target_help

RECORDED = Path(__file__).resolve().parents[1] / "data" / "probe" / "gcc-target"
HOSTS = {       # recorded host: (gcc's name for its CPU, what -march=native becomes)
    "zen3-epyc": ("znver3", "-march=znver3 -mshstk -mno-mwaitx -mno-pku -mno-wbnoinvd"),
    "skylake-sp": ("skylake-avx512", "-march=skylake-avx512 -mno-pku -mno-sgx"),
    "sapphire-rapids": ("sapphirerapids", "-march=sapphirerapids -mno-enqcmd -mno-ptwrite "
                        "-mno-tsxldtrk -mno-waitpkg"),
    "zen2-epyc": ("znver2", "-march=znver2 -mno-mwaitx -mno-wbnoinvd"),
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

