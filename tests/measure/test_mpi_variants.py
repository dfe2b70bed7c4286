"""MPI variants of the skeletons, real ranks on this node: generated, built with mpicc, verified against the reference (the gathered state) and timed as the slowest rank; an exchange left out or a halo too narrow is a wrong result."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hybridtune.describe.configuration import Configuration, runnable
from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.launch_env import nested_mpi_command
from hybridtune.measure.runner import MeasureOptions, measure
from hybridtune.measure.tasks import measure_configuration, plan_tasks

pytestmark = pytest.mark.mpi
QUICK = MeasureOptions(budget_s=0.2, min_repetitions=6, max_repetitions=12, timeout_s=30.0)
N = 240          # Lorenz96 reads 2 components to each side, around the ring

SCENARIO = """name: mpi
methods: [radauIIA5]
ivps: [Lorenz96]
skeletons: [{skeletons}]
machine: SkylakeSP_Gold-6148.yml
n: [{n}]
threads: [1]
ranks: [1, 2]
"""

# A-mpi without the gather of the stage vectors before the right-hand side reads them
UNGATHERED = """code: |
  %COM mpi_allgather y
  %KERNEL RHS_predictor
  %LOOP_START k m
  %COM omp_barrier
  %KERNEL LC
  %COM omp_barrier
  %KERNEL RHS
  %LOOP_END k
  %COM omp_barrier
  %KERNEL Approx
  %KERNEL Update
"""


def _scenario(tmp_path, skeletons: str, n: int = N):
    path = tmp_path / "mpi.scenario.yaml"
    path.write_text(SCENARIO.format(skeletons=skeletons, n=n))
    return load(path)


def _first_of(scenario, method, skeleton: str):
    return next(v for v in pool_for(scenario, method).values() if v.skeleton == skeleton)


def test_each_exchange_form_matches_the_reference_on_one_and_two_ranks(tmp_path):
    # three of the eight MPI variants for tests: both exchanges of A, and F's swapped
    # buffers exchanged with the neighbours (jobs/bench_comm.sh verifies every skeleton form)
    scenario = _scenario(tmp_path, "A-mpi, F-mpi")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    chosen = [_first_of(scenario, method, name) for name in ("A-mpi", "A-mpi-nx", "F-mpi-nx")]
    two = measure_configuration(scenario, Configuration(method, ivp, N, 1, 2), chosen, QUICK)
    for result in two:
        assert result.status == "ok", (result.id, result.message)
        assert result.ranks == 2 and result.check_error <= 1e-10 and result.median_s > 0
    source = {r.id.split("_")[0]: open(r.source).read() for r in two}
    assert "MPI_Allgatherv" in source["A-mpi"] and "HT_HALO" not in source["A-mpi"]
    assert "#define HT_HALO 2L" in source["A-mpi-nx"] and "MPI_Irecv" in source["A-mpi-nx"]
    one = measure_configuration(scenario, Configuration(method, ivp, N, 1, 1), chosen[:1], QUICK)
    assert one[0].status == "ok" and one[0].ranks == 1


def test_a_gather_left_out_is_a_wrong_result_on_two_ranks_only(tmp_path):
    (tmp_path / "Ungathered-mpi.skeleton.yaml").write_text(UNGATHERED)
    scenario = _scenario(tmp_path, "Ungathered-mpi.skeleton.yaml")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    variant = _first_of(scenario, method, "Ungathered-mpi")
    one, = measure_configuration(scenario, Configuration(method, ivp, N, 1, 1), [variant], QUICK)
    two, = measure_configuration(scenario, Configuration(method, ivp, N, 1, 2), [variant], QUICK)
    assert one.status == "ok"
    assert two.status == "wrong_result" and two.check_error > 1e-6, two.message


def test_a_halo_narrower_than_the_reads_is_a_wrong_result(tmp_path):
    scenario = _scenario(tmp_path, "A-mpi")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    config = Configuration(method, ivp, N, 1, 2)
    variant = _first_of(scenario, method, "A-mpi-nx")
    task, = plan_tasks(scenario, config, [variant], QUICK)
    skeleton = {s.name: s for s in scenario.skeletons}["A-mpi-nx"]
    narrow = generate_variant(variant, skeleton, scenario.template_map, method, ivp, halo=1)
    result = measure(replace(task, generated=narrow), QUICK)
    assert result.status == "wrong_result", result.message


def _with_a_halo_wider_than_a_block(tmp_path):
    """A 2-rank task of a neighbour-exchange variant built with a halo wider than a rank's
    block: its ranks give up before the first step."""
    scenario = _scenario(tmp_path, "A-mpi")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    variant = _first_of(scenario, method, "A-mpi-nx")
    task, = plan_tasks(scenario, Configuration(method, ivp, N, 1, 2), [variant], QUICK)
    skeleton = {s.name: s for s in scenario.skeletons}["A-mpi-nx"]
    wide = generate_variant(variant, skeleton, scenario.template_map, method, ivp, halo=N // 2 + 1)
    return replace(task, generated=wide)


def test_a_variant_that_cannot_start_on_its_ranks_is_a_crash_with_the_reason(tmp_path):
    result = measure(_with_a_halo_wider_than_a_block(tmp_path), QUICK)
    assert result.status == "crash" and "halo wider than a rank's block" in result.message


def test_a_variant_that_cannot_start_keeps_its_reason_when_the_launcher_drops_its_stderr(
        tmp_path, monkeypatch):
    # MPI_Abort races the launcher's forwarding of the line a rank wrote just before it: on a
    # loaded machine mpiexec ended the job first and the measurement said only "exited with status
    # 4". Here mpiexec drops the ranks' stderr altogether: the reason comes from their files.
    import hybridtune.measure.runner_child as runner_child

    def dropping_stderr(ranks, argv, cores_per_rank=None):
        command = nested_mpi_command(ranks, argv, cores_per_rank)
        return [command[0], "-errfile-pattern", "/dev/null", *command[1:]]

    monkeypatch.setattr(runner_child, "nested_mpi_command", dropping_stderr)
    result = measure(_with_a_halo_wider_than_a_block(tmp_path), QUICK)
    assert result.status == "crash" and result.message.startswith("exited with status 4: "), \
        result.message
    assert "halo wider than a rank's block" in result.message, result.message
    assert not list(Path(result.source).parent.glob(".reason-*"))      # read and removed


def test_layouts_keep_what_runs_and_say_what_does_not(tmp_path):
    scenario = _scenario(tmp_path, "A, A-mpi")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = list(pool_for(scenario, method).values())
    kept, notes = runnable(skeletons, Configuration(method, ivp, N, 1, 2), pool)
    assert {v.skeleton for v in kept} == {"A-mpi", "A-mpi-nx"} and len(notes) == 1
    assert "skeleton A runs on one rank" in notes[0]
    kept, notes = runnable(skeletons, Configuration(method, ivp, 10, 1, 8), pool)
    assert {v.skeleton for v in kept} == {"A-mpi"}
    assert any("reads 2 components to each side at n = 10, more than a rank's block of 1" in note
               and "its allgather form runs" in note for note in notes)
    with pytest.raises(RequestError, match="12 ranks for IVP Lorenz96 at n = 10: more ranks than"):
        runnable(skeletons, Configuration(method, ivp, 10, 1, 12), pool)


def test_a_neighbour_exchange_asked_for_explicitly_is_refused_where_it_cannot_run(tmp_path):
    text = UNGATHERED.replace("%COM omp_barrier\n  %KERNEL RHS\n",
                              "%COM mpi_neighbour_exchange Y\n  %KERNEL RHS\n").replace(
                              "mpi_allgather y", "mpi_neighbour_exchange y")
    (tmp_path / "Halo-mpi.skeleton.yaml").write_text(text)
    scenario = _scenario(tmp_path, "Halo-mpi.skeleton.yaml")
    assert [s.name for s in scenario.skeletons] == ["Halo-mpi"]
    method, ivp = scenario.methods[0], scenario.ivps[0]
    pool = list(pool_for(scenario, method).values())
    skeletons = {s.name: s for s in scenario.skeletons}
    assert runnable(skeletons, Configuration(method, ivp, N, 1, 2), pool)[0] == pool
    with pytest.raises(RequestError, match="Halo-mpi.skeleton.yaml: IVP Lorenz96 reads 2 "):
        runnable(skeletons, Configuration(method, ivp, 10, 1, 8), pool)
