"""Emulated nodes: one rank per node, named and pinned, and the JSON rank 0 printed last."""

import sys

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.errors import HybridtuneError
from hybridtune.runtime.emulated_nodes import emulated_nodes_command, last_json, on_emulated_nodes

REPORT = ("import json, os\n"
          "if os.environ.get('PMI_RANK') == '0':\n"
          "    print('starting')\n"
          "    print(json.dumps({'node': os.environ['SLURMD_NODENAME'],"
          " 'size': os.environ['PMI_SIZE']}))\n")


def test_each_rank_is_a_node_of_its_own_on_its_own_core():
    command = emulated_nodes_command(["prog"], 2)
    assert command[1:] == ["-n", "1", "-env", "SLURMD_NODENAME", "a", "taskset", "-c", "0",
                           "prog", ":", "-n", "1", "-env", "SLURMD_NODENAME", "b", "taskset",
                           "-c", "1", "prog"]
    with pytest.raises(HybridtuneError, match="expected 1 to 8, got 0"):
        emulated_nodes_command(["prog"], 0)


def test_the_last_json_document_is_read_after_other_lines():
    assert last_json('starting\n{"a": 1}\n{"b": {\n "c": 2}}\n') == {"b": {"c": 2}}
    assert last_json('{"a": 1}') == {"a": 1}
    with pytest.raises(HybridtuneError, match="expected a JSON document"):
        last_json("no json here")


@pytest.mark.mpi
def test_two_emulated_nodes_run_one_world():
    assert on_emulated_nodes([sys.executable, "-c", REPORT], 2, PROJECT_ROOT) == {
        "node": "a", "size": "2"}
