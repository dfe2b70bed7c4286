"""The host's other load from /proc: parsing, the arithmetic of a load record, real busy processes seen on the measured core, and a real timing under load re-timed and flagged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.loader import load as load_description
from hybridtune.generate.pool import select_variants
from hybridtune.measure.load import (BUSY_SHARE, RETIMINGS, WIDE_LIMIT, Look, Process, Watch,
                                     doubts, look, other_load, parse_cpus, parse_process,
                                     parse_thread, quietest, row_doubts)
from hybridtune.measure.runner import MeasureOptions, measure, runner_program, variant_library
from hybridtune.measure.tasks import plan_tasks

SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
FAULTS = Path(__file__).parents[1] / "data" / "faults"


def spinners(cpus, new_session: bool = False) -> list[subprocess.Popen]:
    """One `while True: pass` process pinned to each of cpus."""
    return [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)],
                             start_new_session=new_session) for cpu in cpus]


def ended(processes) -> None:
    for process in processes:
        process.kill()
        process.wait()


def test_stat_lines_are_read_with_odd_process_names():
    line = ("4242 (a b) (c)) R 17 4242 4240 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 1 0 "
            "12345 1000 10 " + " ".join(["0"] * 14) + " 1 0 0")
    process = parse_process(line)
    assert process == Process("a b) (c)", 17, 4240, 300)
    assert parse_thread(line) == (1, 300)
    cpus, running = parse_cpus("cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 10 1 5 100 7 2 3 4 0 0\n"
                               "cpu1 1 0 1 200 0 0 0 0 0 0\nintr 5\nprocs_running 3\n")
    assert cpus == {0: (10 + 1 + 5 + 2 + 3, 4), 1: (2, 0)} and running == 3


def test_others_are_the_busy_ticks_of_the_measured_cores_less_the_measured_threads():
    own = os.getpid()
    before = Look(0.0, {0: (1000, 0), 1: (1000, 0)}, 3, {7: Process("busy", 1, 7, 500)},
                  frozenset({99}), {99: (0, 10), 100: (1, 0)}, {own: (1, 0)})
    after = Look(2.0, {0: (1180, 10), 1: (1200, 0)}, 4, {7: Process("busy", 1, 7, 590),
                                                        8: Process("cc1", 7, 7, 30)},
                 frozenset({99}), {99: (0, 110), 100: (1, 2)}, {own: (1, 5)})
    found = other_load(before, after, cores=1, ticks_per_s=100)
    # thread 99 (100 ticks) ran on cpu 0: of its 180 busy ticks 80 are others', and 10 stolen
    assert found["cpus"] == [0] and found["measured_cores"] == 0.5
    assert found["others_cores"] == 0.4 and found["steal_cores"] == 0.05
    assert found["share"] == 0.45 and found["run_queue"] == [3, 4]
    assert found["processes"] == [["busy", 0.45], ["cc1", 0.15]]
    both = other_load(before, after, cores=2, ticks_per_s=100)
    # cpu 1: 200 busy ticks less thread 100's 2 and this process's 5
    assert both["cpus"] == [0, 1] and both["others_cores"] == pytest.approx(0.4 + 0.965)


def test_doubts_name_the_load_and_the_interval_against_their_limits():
    load = {"cores": 2, "others_cores": 1.93, "steal_cores": 0.0, "share": 0.965}
    assert doubts(0.01, load) == ["busy: other processes used 1.9 of the 2 cores it needs"]
    assert doubts(1.06, None) == ["interval +-106% wider than the 25% limit"]
    assert doubts(float("inf"), {"share": None})[0].startswith("interval unbounded")
    quiet = {"cores": 1, "others_cores": 0.1, "steal_cores": 0.12, "share": BUSY_SHARE - 0.03}
    assert doubts(WIDE_LIMIT, quiet) == []
    stolen = {**quiet, "share": BUSY_SHARE}
    assert doubts(0.02, stolen) == ["busy: other processes used 0.1 (and steal time 0.1) of "
                                    "the 1 core it needs"]
    assert row_doubts({"ci_rel": 0.5, "hardware": {"model": "x"}}) == \
        ["interval +-50% wider than the 25% limit"]
    assert quietest([([0.5], {"share": 0.9}), ([0.01], {"share": 0.3}),
                     ([0.01], {"share": 0.6})]) == 1


def test_a_busy_process_on_the_measured_core_is_seen_and_the_measured_one_is_not():
    cpu = sorted(os.sched_getaffinity(0))[0]
    [measured] = spinners([cpu], new_session=True)
    try:
        time.sleep(0.3)
        watch = Watch([measured.pid], cores=1)
        time.sleep(1.0)
        alone = watch.load()
        [busy] = spinners([cpu])
        try:
            time.sleep(0.3)
            watch = Watch([measured.pid], cores=1)
            time.sleep(1.0)
            loaded = watch.load()
        finally:
            ended([busy])
    finally:
        ended([measured])
    for found in (alone, loaded):
        assert found["cpus"] == [cpu] and found["window_s"] >= 1.0
        # the measured spinner's own time is never others': the two fit in one core
        assert found["measured_cores"] + found["others_cores"] <= 1.1
    # sharing the core with a spinner, the measured one gets about half of it
    assert loaded["others_cores"] >= 0.35 and loaded["share"] >= BUSY_SHARE
    assert all(isinstance(name, str) and cores >= 0 for name, cores in loaded["processes"])
    print(f"measured spinner alone: {alone}; beside a busy one: {loaded}")


def test_look_without_proc_is_none(tmp_path):
    assert look([1], proc=str(tmp_path / "nothing")) is None


def test_a_timing_under_load_is_timed_again_then_flagged_in_its_row():
    faults = load_description(FAULTS / "faults.scenario.yaml")
    method, ivp = faults.methods[0], faults.ivps[0]
    variants = select_variants(faults, method, ["A_RHS_predictor_jl_LC_jli_RHS_jl_Approx_ji_"
                                                "Update_j"])
    [task] = plan_tasks(faults, Configuration(method, ivp, 20000, 1), variants)
    assert runner_program().ok and variant_library(task.generated).ok   # built before the load
    # three on each core, each in a session of its own: the runner starts one too, and where the
    # kernel groups processes by session (autogroup) each session gets an equal share of a core.
    # One spinner in this session took a third of the runner's core, and in 1 run of 11 less than
    # BUSY_SHARE through a whole timing; three sessions take three quarters
    busy = spinners(3 * sorted(os.sched_getaffinity(0)), new_session=True)
    try:
        time.sleep(0.3)
        result = measure(task, MeasureOptions(budget_s=0.2))
    finally:
        ended(busy)
    assert result.status == "ok", result.message
    found = result.hardware["load"]
    assert found["timings"] == 1 + RETIMINGS and found["share"] >= BUSY_SHARE
    assert found["doubts"][0].startswith("busy: other processes used") and \
        found["doubts"][0] in result.message
    assert row_doubts(result.as_row()) == found["doubts"]
    assert result.hardware["model"]        # the hardware's identity stays beside it
