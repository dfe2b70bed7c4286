"""jobs/campaign.sh: two passes of one whole pool in different orders, both stored and merged, resumed without measuring again; a machine file that depends on the host and a campaign folder of other hardware are refused with exit 2 and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "jobs" / "campaign.sh"
DATA = ROOT / "tests" / "data"
SCENARIO = """\
name: campaign-test
methods: [radauIIA7]
ivps: [InverterChain]
skeletons: [F]
machine: host
n: [600]
threads: [1]
strategy: run_all
"""


def campaign(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run([str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def native_machine(tmp_path: Path) -> Path:
    text = (DATA / "shared" / "machines" / "SkylakeSP_Gold-6148.yml").read_text()
    path = tmp_path / "native.yml"
    path.write_text(text.replace("-march=skylake-avx512", "-march=native"))
    return path


def test_machine_file_with_march_native_is_refused_and_nothing_written(tmp_path):
    out = tmp_path / "campaign"
    done = campaign("--machine", str(native_machine(tmp_path)), "--out", str(out))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "-march=native" in done.stderr and "native.yml" in done.stderr
    assert "key 'compiler'" in done.stderr
    assert not out.exists()


def test_campaign_of_other_hardware_is_refused_and_left_unchanged(tmp_path):
    # A campaign begun on other hardware cannot be produced on this machine: its record is
    # written by hand, as the other host would have written it.
    out = tmp_path / "campaign"
    out.mkdir()
    record = {"hardware_id": "0123456789abcdef01234567", "cpu": "Another CPU", "passes": {}}
    (out / "campaign.json").write_text(json.dumps(record))
    before = sorted(p.name for p in out.iterdir())
    machine = DATA / "shared" / "machines" / "SkylakeSP_Gold-6148.yml"
    done = campaign("--machine", str(machine), "--out", str(out))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "0123456789abcdef01234567" in done.stderr and "Another CPU" in done.stderr
    assert "hardware_id" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == before
    assert json.loads((out / "campaign.json").read_text()) == record


@pytest.mark.slow
def test_two_passes_stored_in_different_orders_merged_and_resumed(tmp_path):
    scenario = tmp_path / "campaign.scenario.yaml"
    scenario.write_text(SCENARIO)
    machine = DATA / "shared" / "machines" / "SkylakeSP_Gold-6148.yml"
    out = tmp_path / "campaign"
    args = ("--machine", str(machine), "--scenario", str(scenario), "--out", str(out),
            "--ci", "0.1", "--budget", "0.02")
    done = campaign(*args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    record = json.loads((out / "campaign.json").read_text())
    assert set(record["passes"]) == {"1", "2"}
    assert record["passes"]["2"]["strategy"].startswith("random:")

    def first_timings(path: Path) -> tuple[list, list]:
        with h5py.File(path, "r") as handle:
            table = handle["tables/measurements"]
            ok = table["status"][:].astype(str) == "ok"
            first = ok & (table["timing"][:].astype(str) == "alone")
            return list(table["code_sha256"][:][first].astype(str)), \
                list(table["run_id"][:][first].astype(str))

    one, _ = first_timings(out / "pass1.h5")
    two, _ = first_timings(out / "pass2.h5")
    assert len(one) == len(two) == 32 and set(one) == set(two)
    with h5py.File(out / "pass2.h5", "r") as handle:     # the second pass predicted nothing again
        commands = list(handle["tables/runs/command"][:].astype(str))
    assert commands[0] == "campaign seed" and "predict" not in commands
    assert one != two                       # the same pool, measured in another order
    codes, runs = first_timings(out / "ground-truth.h5")
    assert len(codes) == 64 and len(set(runs)) == 2
    assert np.all(np.unique(codes, return_counts=True)[1] == 2)

    finished = campaign(*args)
    assert finished.returncode == 0 and "Nothing to do" in finished.stdout, finished.stderr
    assert first_timings(out / "ground-truth.h5")[0] == codes
    # killed after the second pass, before the merge: rerunning resumes
    unfinished = {key: value for key, value in record.items() if key != "finished_at"}
    (out / "campaign.json").write_text(json.dumps(unfinished))
    (out / "ground-truth.h5").unlink()
    again = campaign(*args)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert first_timings(out / "pass1.h5")[0] == one     # resumed: nothing measured twice
    assert first_timings(out / "pass2.h5")[0] == two
    assert first_timings(out / "ground-truth.h5")[0] == codes
