"""Measurement: real variants verified and timed; a crash, a hang, a wrong value and a compile error are recorded as such."""

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load, load_named
from hybridtune.generate.cvariant import generate_variant
from hybridtune.measure import runner
from hybridtune.measure.runner import MeasureOptions, MeasureTask, measure
from hybridtune.describe.configuration import Configuration
from hybridtune.generate.pool import pool_for, select_variants
from hybridtune.measure.tasks import measure_configuration, reference_after
from tests_support import covering_sample

FAULTS = Path(__file__).parents[1] / "data" / "faults"
QUICK = MeasureOptions(budget_s=0.2, min_repetitions=6, max_repetitions=12, timeout_s=20.0)
BASE = "A_RHS_predictor_jl_LC_jli_RHS_jl_Approx_ji_"


@pytest.fixture(scope="module")
def faults():
    return load(FAULTS / "faults.scenario.yaml")


def test_faulty_variants_are_recorded_and_the_others_measured(faults):
    method, ivp = faults.methods[0], faults.ivps[0]
    ids = [BASE + name for name in ("Update_segfault", "Update_j", "Update_forever",
                                    "Update_wrong")]
    variants = select_variants(faults, method, ids)
    results = measure_configuration(faults, Configuration(method, ivp, 200, 1), variants,
                                    replace(QUICK, timeout_s=3.0))
    status = {r.id[len(BASE):]: r for r in results}
    assert status["Update_segfault"].status == "crash"
    assert "SIGSEGV" in status["Update_segfault"].message
    assert status["Update_forever"].status == "timeout"
    assert status["Update_wrong"].status == "wrong_result"
    assert status["Update_wrong"].check_error > 1e-6 and status["Update_wrong"].median_s is None
    good = status["Update_j"]
    assert good.status == "ok" and good.median_s > 0 and good.repetitions >= 6
    assert good.check_error <= 1e-10 and good.ci_low_s <= good.median_s <= good.ci_high_s


def test_compile_error_names_the_file_and_the_message(faults):
    # valid descriptions generate valid C, so the broken source is made here on purpose
    method, ivp = faults.methods[0], faults.ivps[0]
    variant = pool_for(faults, method)[BASE + "Update_j"]
    skeleton = faults.skeletons[0]
    generated = generate_variant(variant, skeleton, faults.template_map, method, ivp)
    broken = replace(generated, code=generated.code.replace("void ht_step", "void ht_step oops"))
    h = ivp.step_size(200)
    result = measure(MeasureTask(broken, method.name, ivp.name, 200, 1, h,
                                 reference_after(method, ivp, 200, h, 3)), QUICK)
    assert result.status == "compile_error"
    assert "variant.c" in result.message and "error" in result.message


@pytest.mark.slow
@pytest.mark.parametrize("ivp_name, n", [("Cusp", 300), ("InverterChain", 200), ("Medakzo", 200),
                                         ("Wave1D", 200)])
def test_sample_of_the_pool_compiles_agrees_and_is_timed(default_scenario, radau7, ivp_name, n):
    ivp = load_named("ivp", ivp_name, PROJECT_ROOT)
    sample = covering_sample(pool_for(default_scenario, radau7).values())
    results = measure_configuration(default_scenario, Configuration(radau7, ivp, n, 2), sample,
                                    QUICK)
    assert len(results) == len(sample) >= 8
    for result in results:
        assert result.status == "ok", (result.id, result.message)
        assert result.check_error <= 1e-10 and np.isfinite(result.median_s)


def test_n_fixed_at_generation(tmp_path):
    text = (FAULTS / "faults.scenario.yaml").read_text() + "specialise_n: true\n"
    (tmp_path / "fixed.scenario.yaml").write_text(text)
    (tmp_path / "Update.kernel.yaml").write_text((FAULTS / "Update.kernel.yaml").read_text())
    scenario = load(tmp_path / "fixed.scenario.yaml")
    assert scenario.specialise_n
    method, ivp = scenario.methods[0], scenario.ivps[0]
    variants = select_variants(scenario, method, [BASE + "Update_j"])
    result = measure_configuration(scenario, Configuration(method, ivp, 200, 1), variants, QUICK)[0]
    assert result.status == "ok"
    assert "#define HT_FIXED_N 200L" in Path(result.source).read_text()


class _FlakyStart:
    """A fake runner process: the step launcher's intermittent failure to start MPI (Slurm's
    PMI2 plugin rejecting mpich's address card) cannot be produced on demand, so this child fails
    its first exchange with mpich's message the first `failing` times it is started."""
    started = 0

    def __init__(self, failing: int, message: str):
        self.failing, self.message = failing, message

    def __call__(self, runner, library, task, timeout_s):
        _FlakyStart.started += 1
        return self

    def close(self):
        pass


@pytest.mark.parametrize("failing, hosts, message, started, ok", [
    (2, ("n1", "n2"), "Fatal error in internal_Init_thread: MPI_Init_thread(argc=0x7f) failed",
     3, True),
    (3, ("n1", "n2"), "Fatal error in internal_Init_thread: MPI_Init_thread(argc=0x7f) failed",
     3, False),
    (1, (), "Fatal error in internal_Init_thread: MPI_Init_thread(argc=0x7f) failed", 1, False),
    (1, ("n1", "n2"), "exited with status 11: segmentation fault", 1, False),
])
def test_a_step_whose_mpi_start_failed_is_started_again_and_a_variants_crash_is_not(
        monkeypatch, failing, hosts, message, started, ok):
    fake = _FlakyStart(failing, message)
    _FlakyStart.started = 0
    monkeypatch.setattr(runner, "RunnerChild", fake)

    def first(child):
        if _FlakyStart.started <= child.failing:
            raise runner.ChildFailed("crash", child.message)
        return "answer"

    task = MeasureTask(generated=None, method="m", ivp="i", n=8, threads=1, h=0.1,
                       reference=np.zeros(8), hosts=hosts)
    child, answer, failure = runner._started("runner", "library", task, MeasureOptions(), first)
    assert _FlakyStart.started == started
    assert (answer == "answer") == ok and (failure is None) == ok
    if not ok and started == runner.LAUNCH_ATTEMPTS:
        assert failure.message.startswith("MPI did not start in 3 attempts")


def test_a_repetition_ends_at_its_time_limit_whatever_its_steps(faults):
    """A load can slow the steps a thousandfold after a repetition's steps were counted; its time
    limit ends it then, and the reply is still seconds per step run."""
    method, ivp = faults.methods[0], faults.ivps[0]
    variant = pool_for(faults, method)[BASE + "Update_j"]
    generated = generate_variant(variant, faults.skeletons[0], faults.template_map, method, ivp)
    task = MeasureTask(generated, method.name, ivp.name, 200, 1, ivp.step_size(200))
    child = runner.RunnerChild(str(runner.runner_program().path),
                          str(runner.variant_library(generated).path), task, 60.0)
    try:
        child.send(f"rep 0.0 {task.h!r} 1000")
        one_step = float(child.read())
        steps = int(600 / one_step)      # ten minutes of steps, were they all run
        started = time.monotonic()
        child.send(f"rep 0.0 {task.h!r} {steps} 0.05")
        per_step = float(child.read())
        took = time.monotonic() - started
    finally:
        child.close()
    assert took < 5.0, took
    assert 0.2 * one_step < per_step < 20 * one_step, (per_step, one_step)
