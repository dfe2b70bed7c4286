"""Property: every scenario drawn from the shipped library, valid or not, ends variants,
predict --dry-run and tune --dry-run with exit 0, or with exit 2 and one error line that names the
file and key; never a traceback. Beside it, the sizes and the dry run the property found wanting."""

import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hybridtune.describe.expr import LONG_MAX
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.commands.scenario_runs import load_error, problems, run_command, run_scenario
from hybridtune.commands.scenario_space import MACHINE_FILE, Drawn, scenarios

pytestmark = pytest.mark.slow


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_generated_scenarios_end_in_exit_0_or_one_error_line(drawn):
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        outcomes = run_scenario(drawn, folder)
        found = problems(drawn, outcomes, folder, load_error(drawn, folder))
    assert not found, drawn.describe() + "\n" + "\n".join(found)


def _one(values: dict, tmp_path: Path) -> dict:
    drawn = Drawn({"methods": "radauIIA7", "skeletons": ["A", "A-mpi"], "threads": 1,
                   "machine": MACHINE_FILE, **values}, mpi=True)
    outcomes = run_scenario(drawn, tmp_path)
    assert not problems(drawn, outcomes, tmp_path, load_error(drawn, tmp_path))
    return outcomes


def test_a_size_beyond_any_budget_is_refused_by_the_step_estimate_at_once(tmp_path):
    """n = 10^12: the step estimate counts operations per block, not per component, and the
    halo on two ranks is found from each block's ends."""
    started = time.monotonic()
    outcomes = _one({"ivps": ["Wave1D", "Lorenz96"], "n": 10 ** 12, "ranks": [1, 2]}, tmp_path)
    assert outcomes["tune"].code == 2
    assert "longer than --budget" in outcomes["tune"].stderr
    assert outcomes["predict"].code == 0 and "kerncraft analyses" in outcomes["predict"].stdout
    assert time.monotonic() - started < 30


def test_a_range_whose_rounded_sizes_leave_c_long_is_refused_at_its_upper_end(tmp_path):
    outcomes = _one({"ivps": ["Heat2D"], "n": {"from": 1, "to": LONG_MAX, "points": 3}},
                    tmp_path)
    assert outcomes["variants"].code == 2
    assert "key 'n.to'" in outcomes["variants"].stderr and "Heat2D" in outcomes["variants"].stderr


def test_predict_dry_run_ranks_from_a_full_store_and_writes_nothing(tmp_path):
    store = tmp_path / "fixture.h5"
    shutil.copy(PROJECT_ROOT / "tests/data/learn/fixture.h5", store)
    before = store.read_bytes()
    outcome = run_command(["predict", str(PROJECT_ROOT / "tests/data/learn/learn.scenario.yaml"),
                           "--dry-run", "--db", str(store), "--head", "1"])
    assert outcome.code == 0, outcome.stderr + outcome.traceback
    assert "kerncraft analyses: 0 " in outcome.stdout
    assert "radauIIA7 Cusp n=600 threads=1: 32 ranked" in outcome.stdout
    assert store.read_bytes() == before
