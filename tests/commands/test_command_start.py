"""The command line starts light: --help and a light command import no command but the chosen one, and
none of the slow libraries the pipeline needs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hybridtune.commands.main import COMMANDS, _parser

SLOW = ("sklearn", "sympy", "matplotlib", "pandas", "scipy", "kerncraft", "optuna", "mpi4py")


def imported_after(argv: list[str]) -> set:
    """The modules loaded once the parser for argv is built."""
    code = ("import json, sys; from hybridtune.commands.main import _parser; "
            f"_parser({argv!r}); print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return set(json.loads(done.stdout))


def test_help_imports_no_command_and_no_slow_library():
    loaded = imported_after(["--help"])
    assert not {m for m in loaded if m.endswith("_command")}
    assert not {m.split(".")[0] for m in loaded} & set(SLOW)
    assert not {m for m in loaded if m.startswith("hybridtune.pipeline")}


@pytest.mark.parametrize("argv", [["check", "x.yaml"], ["method", "gauss", "2"]])
def test_a_light_command_imports_its_module_alone(argv):
    loaded = imported_after(argv)
    assert {m for m in loaded if m.endswith("_command")} == {
        f"hybridtune.commands.{COMMANDS[argv[0]][0]}"}
    assert not {m.split(".")[0] for m in loaded} & set(SLOW)


def test_every_command_declares_its_options_when_none_is_chosen():
    parser = _parser()
    sub = next(action for action in parser._actions if hasattr(action, "choices")
               and action.choices)
    assert list(sub.choices) == list(COMMANDS)
    assert all(len(command._actions) > 1 for command in sub.choices.values())
