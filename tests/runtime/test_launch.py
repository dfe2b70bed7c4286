"""The runtime without MPI: the launcher named from the environment, a direct launch, Slurm durations, signals."""

from __future__ import annotations

import os
import signal

import pytest

from hybridtune.runtime import launch, signals
from hybridtune.runtime.executors import InlineExecutor, release
from hybridtune.runtime.launch import (discover, launcher_name, parse_slurm_duration,
                                       step_tasks)


def test_the_launcher_is_named_by_the_environment():
    assert launcher_name({}) == "direct"
    assert launcher_name({"PMI_RANK": "0"}) == "mpiexec"
    assert launcher_name({"PMI_RANK": "0", "SLURM_STEP_ID": "3"}) == "srun"
    assert launcher_name({"SLURM_STEP_ID": "3", "SLURM_STEP_NUM_TASKS": "4"}) == "srun"
    assert step_tasks({"SLURM_STEP_ID": "batch", "SLURM_NTASKS": "4"}) == 1


def test_a_direct_launch_is_one_rank_on_this_node_without_mpi(monkeypatch):
    monkeypatch.setattr(launch, "launcher_name", lambda: "direct")
    found = discover()
    assert (found.launcher, found.rank, found.size) == ("direct", 0, 1)
    [node] = found.nodes
    assert node.ranks == (0,) and node.cores == tuple(sorted(os.sched_getaffinity(0)))
    assert found.comm is None and found.mpi is None
    release(found, 0)           # nothing to tell: no other rank


@pytest.mark.parametrize("text, seconds", [("1-02:03:04", 93784.0), ("02:03", 123.0),
                                           ("5", 300.0), ("UNLIMITED", None), ("", None)])
def test_slurm_durations(text, seconds):
    assert parse_slurm_duration(text) == seconds


def test_a_task_that_fails_inline_fails_its_future():
    executor = InlineExecutor()
    assert executor.submit(lambda x: x + 1, 1).result() == 2
    with pytest.raises(ZeroDivisionError):
        executor.submit(lambda: 1 / 0).result()


def test_a_recorded_signal_stops_the_pipeline_at_its_next_check(monkeypatch):
    monkeypatch.setattr(signals, "_received", [])
    signals.check()
    signals._record(signal.SIGTERM, None)
    stop = signals.received()
    assert stop.code == 128 + signal.SIGTERM and str(stop) == "SIGTERM"
    with pytest.raises(signals.Terminated):
        signals.check()
