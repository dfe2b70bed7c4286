"""The space of scenarios: drawn scenarios written as one key a line, with their files beside."""

import yaml
from hypothesis import HealthCheck, given, settings

from hybridtune.commands.scenario_space import Drawn, scenarios


def test_a_drawn_scenario_is_written_with_the_files_beside_it(tmp_path):
    drawn = Drawn({"methods": ["radauIIA7"], "ranks": [1, 4]}, {"Mine.method.yaml": "name: x\n"})
    assert drawn.ranks_without_mpi
    path = drawn.write(tmp_path)
    assert yaml.safe_load(path.read_text()) == {"methods": ["radauIIA7"], "ranks": [1, 4]}
    assert (tmp_path / "Mine.method.yaml").read_text() == "name: x\n"
    assert drawn.describe().startswith("# drawn.scenario.yaml\nmethods:")
    assert not Drawn({"ranks": 4}, mpi=True).ranks_without_mpi


@settings(max_examples=5, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_every_drawn_scenario_is_yaml_with_keys(drawn):
    values = yaml.safe_load(drawn.text())
    assert isinstance(values, dict) and values
