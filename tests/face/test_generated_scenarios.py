"""Property: every scenario drawn from the shipped library, valid or not, ends variants,
predict --dry-run and tune --dry-run with exit 0, or with exit 2 and one error line that names the
file; never a traceback."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from scenario_space import load_error, problems, run_scenario, scenarios

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

