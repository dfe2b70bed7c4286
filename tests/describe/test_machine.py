"""Machine files: kerncraft's published files load unchanged; `host` resolves; broken files are refused."""

import pytest

from hybridtune.describe.library import host_machine_file
from hybridtune.describe.loader import load
from hybridtune.errors import DescriptionError
from tests_support import SHARED_MACHINES, expect_error

FILES = sorted(SHARED_MACHINES.glob("*.yml"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kerncraft_files_load(path):
    machine = load(path, "machine")
    assert machine.clock_hz > 1e9 and machine.cores >= 8
    assert [level.name for level in machine.levels][-1] == "MEM"
    assert all(level.size_bytes > 0 for level in machine.levels[:-1])
    assert dict(machine.in_core_models)["OSACA"]


def test_skylake_facts():
    machine = load(SHARED_MACHINES / "SkylakeSP_Gold-6148.yml", "machine")
    assert machine.clock_hz == 2.4e9 and machine.cores_per_numa_domain == 20
    assert [level.size_bytes for level in machine.levels] == [32e3, 1e6, 27.5e6, None]


def test_host_resolves_to_a_loadable_file():
    path, note = host_machine_file()
    assert path.is_file() and "host" in note
    assert load(path, "machine").cores >= 1


def test_broken_machine_file(write):
    text = (SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
    expect_error(write("m.yml", text.replace("clock: 2.4 GHz", "clock: fast")), "clock", 9,
                 "a quantity in Hz", kind="machine")
    expect_error(write("m.yml", text.replace("cores per socket: 20\n", "")), "cores per socket",
                 None, "missing", kind="machine")
    expect_error(write("m.yml", text.replace("clock: 2.4 GHz", "clock: 1e309 GHz")), "clock", 9,
                 "a positive, finite quantity in Hz", kind="machine")
    expect_error(write("m.yml", text.replace("clock: 2.4 GHz", "clock: " + "9" * 400)), "clock",
                 9, "a positive, finite quantity in Hz", kind="machine")
    expect_error(write("m.yml", text.replace("cacheline size: 64 B", "cacheline size: 0.5 B")),
                 "cacheline size", 56, "a cache line of at least 1 B", kind="machine")


def test_python_object_tags_are_refused_before_kerncraft_sees_them(tmp_path):
    # kerncraft loads machine files with ruamel's unsafe loader: such a tag would run code there
    text = (SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
    path = tmp_path / "tagged.yml"
    path.write_text(text + 'notes: !!python/object/apply:os.system ["touch ' +
                    str(tmp_path / "ran") + '"]\n')
    with pytest.raises(DescriptionError) as info:
        load(path, "machine")
    assert "without Python object tags" in str(info.value) and str(path) in str(info.value)
    assert not (tmp_path / "ran").exists()


def test_a_file_says_whether_kerncraft_builds_for_its_cpu(tmp_path):
    skylake = SHARED_MACHINES / "SkylakeSP_Gold-6148.yml"
    machine = load(skylake, "machine")
    assert [name for name, _ in machine.compilers] == ["icc", "clang", "gcc"]
    assert "-march=skylake-avx512" in dict(machine.compilers)["gcc"]
    assert machine.compiles_for_any_host
    native = tmp_path / "native.yml"
    native.write_text(skylake.read_text().replace("-march=skylake-avx512 -D_POSIX_C_SOURCE=200809L "
                                                  "-fopenmp -lm", "-march=native -fopenmp -lm"))
    assert not load(native, "machine").compiles_for_any_host


def test_hybridtune_builds_with_its_own_compiler_key_where_the_file_has_one(tmp_path):
    """A probed target too long for kerncraft's folder names: `compiler` has kerncraft's short
    form, `hybridtune compiler` the whole target, which hybridtune's analyses use."""
    skylake = SHARED_MACHINES / "SkylakeSP_Gold-6148.yml"
    whole = "-O3 -march=skylake-avx512 -mavx512vnni -mno-pku -fopenmp"
    both = tmp_path / "both.yml"
    both.write_text(skylake.read_text() + f"\nhybridtune compiler: {{gcc: {whole}}}\n")
    assert load(both, "machine").compilers == (("gcc", whole),)
    native = tmp_path / "native.yml"
    native.write_text(both.read_text().replace("-march=skylake-avx512 -D_POSIX_C_SOURCE",
                                               "-march=native -D_POSIX_C_SOURCE"))
    assert load(native, "machine").compiles_for_any_host
