"""Commands run in-process: exit codes and output kept, and what breaks the one-error-line rule."""

from hybridtune.commands.scenario_runs import CommandOutcome, problems, run_command
from hybridtune.commands.scenario_space import Drawn


def test_a_command_runs_in_process_with_its_exit_code_and_error_line(tmp_path):
    outcome = run_command(["variants", str(tmp_path / "missing.scenario.yaml")])
    assert outcome.code == 2 and not outcome.traceback
    assert [line for line in outcome.stderr.splitlines() if line.startswith("error:")]


def test_problems_name_other_exits_and_exit_2_without_one_error_line(tmp_path):
    drawn = Drawn({"methods": ["radauIIA7"]})
    outcomes = {"variants": CommandOutcome(0, "", ""), "tune": CommandOutcome(1, "", "boom"),
                "predict": CommandOutcome(2, "", "error: one\nerror: two\n")}
    found = problems(drawn, outcomes, tmp_path, None)
    assert [line.split("\n")[0] for line in found] == [
        "tune: exit 1", "predict: exit 2 with 2 error lines"]
    assert problems(drawn, {"variants": CommandOutcome(0, "", "")}, tmp_path, None) == []
