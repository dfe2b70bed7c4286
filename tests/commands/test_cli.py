"""The command line: outputs, JSON fields, exit code 2 with one message on bad input, nothing half-written."""

import json
import subprocess
import sys

import numpy as np
import pytest

from hybridtune.commands.main import main
from hybridtune.describe.library import PROJECT_ROOT

SCENARIOS = PROJECT_ROOT / "scenarios"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_ok(capsys):
    files = [SCENARIOS / "default.yaml", SCENARIOS / "ivps/Cusp.ivp.yaml",
             SCENARIOS / "kernels/LC.kernel.yaml", PROJECT_ROOT / "tests/data/shared/machines/Zen2_EPYC-7452.yml"]
    code, out, err = run(capsys, "check", *map(str, files))
    assert code == 0 and err == ""
    assert out.count("ok: ") == 4 and "(scenario default)" in out and "(ivp Cusp)" in out


def test_check_reports_each_bad_file(capsys, write):
    bad = write("x.ivp.yaml", "name: X\ncomponents: []\ninitial_values: []\n")
    code, out, err = run(capsys, "check", str(bad), str(SCENARIOS / "ivps/Wave1D.ivp.yaml"),
                         "/no/such.yaml")
    assert code == 2
    assert f"{bad}:2: key 'components'" in err and "at least 1 item" in err
    assert "/no/such.yaml: expected an existing file" in err
    assert "ok: " in out


def test_variants_json(capsys):
    code, out, _ = run(capsys, "variants", str(SCENARIOS / "default.yaml"), "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 384
    assert {"id", "skeleton", "kernels"} <= set(rows[0])
    by_id = {r["id"]: r for r in rows}
    row = by_id["E_RHS_LC_predictor_jil_RHS_LC_jli_RHS_Approx_ji_Update_j"]
    assert row["kernels"] == {"RHS_LC_predictor": "RHS_LC_predictor_jil", "RHS_LC": "RHS_LC_jli",
                              "RHS_Approx": "RHS_Approx_ji", "Update": "Update_j"}
    assert row["barriers_per_step"] == 7   # m + 1 with m = 6


def test_solve_json_and_out(capsys, tmp_path):
    out_file = tmp_path / "y.npy"
    code, out, _ = run(capsys, "solve", "--method", "radauIIA7", "--ivp", "IC", "-n", "50",
                       "--t1", "0.01", "--steps", "40", "--json", "--out", str(out_file))
    result = json.loads(out)
    assert code == 0 and result["n"] == 50 and result["t"] == 0.01
    y = np.load(out_file)
    assert y.shape == (50,) and result["norm2"] == pytest.approx(np.linalg.norm(y), rel=1e-15)


def test_solve_with_method_and_ivp_paths(capsys):
    code, out, _ = run(capsys, "solve", "--method",
                       str(PROJECT_ROOT / "tests/data/shared/offsite-formats/methods/radauIIA5.ode"),
                       "--ivp", str(SCENARIOS / "ivps/Heat2D.ivp.yaml"), "-n", "16", "--t1",
                       "0.001", "--steps", "10", "--corrector-steps", "2")
    assert code == 0 and "Heat2D with radauIIA5 (m = 2), n = 16" in out


@pytest.mark.parametrize("argv, message", [
    (["-n", "10"], "n = 10 is not valid: expected n a multiple of 3"),
    (["-n", "30", "--steps", "0"], "expected a positive number of steps"),
    (["-n", "30", "--t1", "-1"], "expected finite t0 < t1"),
    (["-n", "30", "--ivp", "Nope"], "expected an IVP file path or a library name"),
    (["-n", "30", "--ivp", "Medakso"], "; did you mean 'Medakzo'?"),
    (["-n", "30", "--t1", "1.0", "--steps", "2"], "beyond the explicit PIRK step's stability"),
])
def test_solve_bad_requests_write_nothing(capsys, tmp_path, argv, message):
    out_file = tmp_path / "y.npy"
    base = {"--method": "radauIIA7", "--ivp": "Cusp", "--t1": "1e-5", "--steps": "2"}
    args = list(argv)
    for key, value in base.items():
        if key not in args:
            args += [key, value]
    code, out, err = run(capsys, "solve", *args, "--out", str(out_file))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out_file.exists() and list(tmp_path.iterdir()) == []


def test_method_command_writes_a_loadable_file(capsys, tmp_path):
    target = tmp_path / "g.method.yaml"
    code, _, _ = run(capsys, "method", "gauss", "2", "-o", str(target))
    assert code == 0
    code, out, _ = run(capsys, "check", str(target))
    assert code == 0 and "(method gauss4)" in out
    code, _, err = run(capsys, "method", "adams", "2")
    assert code == 2 and "expected one of" in err


def test_overflowing_norm_is_refused(capsys):
    code, out, err = run(capsys, "solve", "--method", "radauIIA7", "--ivp", "Heat2D", "-n", "10000",
                         "--t1", "0.01", "--steps", "100", "--json")
    assert code == 2 and out == "" and "stability" in err


def test_usage_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["solve", "--method", "radauIIA7"])
    assert info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_console_script_exit_code():
    result = subprocess.run([sys.executable, "-m", "hybridtune", "check", "/nonexistent.ivp.yaml"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "expected an existing file" in result.stderr


MEASURED = "H_RHS_predictor_jl_LC_jli_RHS_jl_RHS_Approx_Update_ji"


def test_measure_json(capsys):
    code, out, err = run(capsys, "measure", str(SCENARIOS / "default.yaml"), "--variant",
                         MEASURED, "-n", "600", "--threads", "1", "--budget", "0.2", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 4   # the four IVPs
    for row in rows:
        assert {"id", "status", "median_s", "ci_rel", "repetitions"} <= set(row)
        assert row["id"] == MEASURED and row["status"] == "ok" and row["median_s"] > 0
        assert row["repetitions"] >= 6 and row["n"] == 600 and row["threads"] == 1


def test_measure_groups_failures_and_exits_4_without_a_variant_measured_ok(capsys, tmp_path):
    from tune_support import failing_scenario
    base = "A_RHS_predictor_jl_LC_jli_RHS_jl_Approx_ji_"
    argv = ["measure", failing_scenario(tmp_path), "--db", str(tmp_path / "s.h5"),
            "--budget", "0.1"]
    for name in ("Update_wrong", "Update_segfault"):
        argv += ["--variant", base + name]
    code, out, err = run(capsys, *argv)
    assert code == 4, err
    lines = out.splitlines()
    assert "1 of 2 measurements failed: crash: killed by signal SIGSEGV (first: " in out
    assert "1 of 2 measurements failed: wrong_result: after 3 steps the state differs" in out
    assert lines[-1].startswith("1 of 1 configurations have no variant measured ok: every "
                                "variant failed (")


@pytest.mark.parametrize("argv, message", [
    (["--variant", "A_nope"], "unknown variant id(s) A_nope"),
    (["-n", "601"], "n = 601 is not valid"),
    (["--threads", "64", "--strict"], "64 threads requested"),
    (["--threads", "0"], "expected counts >= 1"),
])
def test_measure_bad_requests(capsys, argv, message):
    code, out, err = run(capsys, "measure", str(SCENARIOS / "default.yaml"), *argv)
    assert code == 2 and message in err and out == ""


def test_missing_compiler_is_one_message(capsys, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-here")
    code, out, err = run(capsys, "measure", str(SCENARIOS / "default.yaml"), "--variant",
                         MEASURED, "-n", "600", "--threads", "1")
    assert code == 2 and "C compiler 'no-such-compiler-here' not found" in err


@pytest.mark.parametrize("argv, message", [
    (["predict", str(SCENARIOS / "default.yaml"), "--ranks", "2"],
     "--ranks 2: scenario default"),
    (["predict", str(SCENARIOS / "default.yaml"), "-n", "7"], "n = 7 is not valid"),
    (["measure", str(SCENARIOS / "mpi.yaml"), "--ranks", "2", "--threads", "64"],
     "2 ranks x 64 threads: more cores than the"),
    (["measure", str(SCENARIOS / "mpi.yaml"), "-n", "9", "--ranks", "16", "--threads", "1"],
     "16 ranks for IVP Wave1D at n = 9: more ranks than components"),
])
def test_a_layout_that_cannot_run_is_one_message_exit_2_and_no_store(capsys, tmp_path, argv,
                                                                     message):
    code, out, err = run(capsys, *argv, "--db", str(tmp_path / "never.h5"))
    assert code == 2 and err.count("error:") == 1 and message in err, err
    assert not list(tmp_path.iterdir())
