"""kerncraft in-process: ECM and roofline of real loops, and every kind of failure as a result."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.predict import kerncraft_adapter
from hybridtune.predict.kerncraft_adapter import PINNED, VersionError, analyse, versions
from tests_support import SHARED_MACHINES

SKYLAKE = str(PROJECT_ROOT / "data" / "machines" / "SkylakeSP_Gold-6148.yml")
TRIAD = textwrap.dedent("""
    double a0[n];
    double a1[n];
    double a2[n];
    double s0;
    for (long j = 0; j < n; ++j) {
      a0[j] = a1[j] + s0 * a2[j];
    }
""")
SAMPLES = ((1000, {"n": 1000}), (10 ** 7, {"n": 10 ** 7}))

pytestmark = pytest.mark.slow


def test_ecm_gives_every_core_count_and_the_contributions(tmp_path):
    machine = load_named("machine", "SkylakeSP_Gold-6148", PROJECT_ROOT)
    small, large = analyse(TRIAD, str(tmp_path / "k"), SKYLAKE, SAMPLES, "ECM")
    assert small.status == large.status == "ok", (small.message, large.message)
    assert len(small.cycles_per_cl) == machine.cores_per_numa_domain
    assert small.iterations_per_cl == 8
    assert small.contributions["flops_per_iteration"] == 2
    assert small.contributions["T_L3MEM"] == 0 < large.contributions["T_L3MEM"]
    assert large.cycles_per_cl[0] > small.cycles_per_cl[0]           # memory is slower than L1
    assert large.saturation_cores > 0 and small.saturation_cores == 0
    assert (tmp_path / "k" / "kernel.c").is_file()                   # intermediates stay there


def test_roofline_is_the_fast_alternative(tmp_path):
    [result] = analyse(TRIAD, str(tmp_path / "k"), SKYLAKE, SAMPLES[1:], "Roofline")
    assert result.status == "ok", result.message
    assert result.cycles_per_cl[0] > 0
    assert result.cycles_per_cl[1] == pytest.approx(result.cycles_per_cl[0] / 2)


def test_a_loop_kerncraft_cannot_parse_fails_with_its_reason(tmp_path):
    code = TRIAD.replace("a1[j] + s0 * a2[j]", "exp(a1[j])")
    [result] = analyse(code, str(tmp_path / "k"), SKYLAKE, SAMPLES[:1], "ECM")
    assert result.status == "failed"
    assert "AssertionError" in result.message or "supported" in result.message


def test_a_machine_file_kerncraft_cannot_use_fails_per_loop(tmp_path):
    broken = tmp_path / "broken.yml"
    text = (SHARED_MACHINES / "SkylakeSP_Gold-6148.yml").read_text()
    broken.write_text(text.replace("OSACA: SKX", "OSACA: NOSUCHARCH"))
    [result] = analyse(TRIAD, str(tmp_path / "k"), str(broken), SAMPLES[:1], "ECM")
    assert result.status == "failed" and result.message


def test_missing_osaca_is_reported_not_raised(tmp_path):
    # A fake: OSACA is installed here, so its absence is simulated by hiding the module.
    script = textwrap.dedent(f"""
        import sys
        sys.modules["osaca"] = None
        from hybridtune.predict.kerncraft_adapter import analyse, versions
        [r] = analyse({TRIAD!r}, {str(tmp_path / 'k')!r}, {SKYLAKE!r}, ((1000, {{"n": 1000}}),))
        print(r.status, versions()["osaca"], r.message[:60])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    status, osaca_version, *_ = out.stdout.split()
    assert status == "failed" and osaca_version == "missing"


def test_versions_name_both_tools():
    found = versions()
    assert found["kerncraft"] not in ("", "missing") and found["osaca"] not in ("", "missing")


def test_pyproject_pins_the_versions_the_adapter_patches():
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    pins = [f"{name}=={version}" for name, version in PINNED.items()]
    assert set(pins) <= set(project["dependencies"])
    assert versions() == PINNED


@pytest.fixture
def installed(monkeypatch):
    """installed(kerncraft=..., osaca=...) fakes the installed versions (None: not installed)."""
    def fake(**found):
        monkeypatch.setattr(kerncraft_adapter, "_installed_version",
                            lambda name: found.get(name, PINNED[name]))
        kerncraft_adapter.check_versions.cache_clear()
    yield fake
    kerncraft_adapter.check_versions.cache_clear()


@pytest.mark.parametrize("found, shown", [
    ({"kerncraft": "0.8.19"}, "found kerncraft 0.8.19 and osaca 0.7.1"),
    ({"osaca": "0.8.0"}, "found kerncraft 0.8.18 and osaca 0.8.0"),
    ({"osaca": None}, "found kerncraft 0.8.18 and osaca not installed"),
])
def test_other_versions_are_refused_before_the_first_analysis(installed, tmp_path, found, shown):
    # The environment holds the pinned versions, so another installed version can only be faked
    # by replacing the adapter's metadata lookup.
    installed(**found)
    for start in (versions, lambda: analyse(TRIAD, str(tmp_path / "k"), SKYLAKE, SAMPLES[:1])):
        with pytest.raises(VersionError) as info:
            start()
        message = str(info.value)
        assert shown in message and "expected kerncraft 0.8.18 and osaca 0.7.1" in message
        assert "make install" in message and "pip install kerncraft==0.8.18 osaca==0.7.1" in message
    assert not (tmp_path / "k").exists()     # refused before kerncraft wrote anything


# what the probe writes on a host gcc knows only by an older name: -march=NAME and the ISA
# extensions it adds (here Skylake-SP's own, spelt out: the code is the same)
LONG_TARGET = ("-march=skylake-avx512 -madx -maes -mavx -mavx2 -mavx512bw -mavx512cd -mavx512dq "
               "-mavx512f -mavx512vl -mbmi -mbmi2 -mclflushopt -mclwb -mcx16 -mf16c -mfma "
               "-mfsgsbase -mlzcnt -mmovbe -mpclmul -mpku -mpopcnt -mprfchw -mrdrnd -mrdseed "
               "-msahf -mxsave -mxsavec -mxsaveopt -mxsaves")


def long_flags_machine(folder) -> str:
    """The Skylake-SP machine file with gcc only, its flags over 300 characters."""
    text = open(SKYLAKE).read()
    start = text.index("compiler: !!omap")
    end = text.index("\n\n", start)
    flags = f"-O3 {LONG_TARGET} -D_POSIX_C_SOURCE=200809L -fno-trapping-math -fopenmp -ffreestanding"
    path = folder / "long-flags.yml"
    path.write_text(text[:start] + f"compiler: !!omap\n- gcc: {flags}\n" + text[end:])
    return str(path)


@pytest.mark.parametrize("model", ["ECM", "Roofline"])
def test_a_machine_file_with_flags_longer_than_a_file_name_runs(tmp_path, model):
    path = long_flags_machine(tmp_path)
    flags = open(path).read().split("- gcc: ")[1].splitlines()[0]
    assert len(flags) > 300
    small, large = analyse(TRIAD, str(tmp_path / "k"), path, SAMPLES, model)
    assert small.status == large.status == "ok", (small.message, large.message)
    assert large.cycles_per_cl[0] > small.cycles_per_cl[0] > 0
    located = [p for p in (tmp_path / "k").rglob("*") if p.is_dir()]
    assert located and max(len(p.name) for p in located) <= 64


def test_analyses_build_with_the_files_own_compiler_key(tmp_path):
    """A probed file whose whole target kerncraft cannot name a folder after: kerncraft's
    `compiler` has a short form, the analyses build with `hybridtune compiler`'s whole target."""
    text = open(long_flags_machine(tmp_path)).read()
    whole = text.split("- gcc: ")[1].splitlines()[0]
    short = "-O3 -march=skylake-avx512 -D_POSIX_C_SOURCE=200809L -fopenmp -ffreestanding"
    path = tmp_path / "probed.yml"
    path.write_text(text.replace(f"- gcc: {whole}\n", f"- gcc: {short}\n")
                    + f"\nhybridtune compiler: !!omap\n- gcc: {whole}\n")
    [result] = analyse(TRIAD, str(tmp_path / "k"), str(path), SAMPLES[:1], "ECM")
    assert result.status == "ok", result.message
    digest = kerncraft_adapter.digest
    built = (tmp_path / "k" / ".kernel.c_kerncraft" / digest(path.name) / digest("gcc")
             / digest("gcc", *whole.split(" ")))
    assert built.is_dir() and any(built.iterdir())
    assert len(list((built.parent).iterdir())) == 1        # nothing built with the short form
