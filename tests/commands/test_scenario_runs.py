"""Commands run in-process: exit codes and output kept, and what breaks the one-error-line rule."""

from hybridtune.commands.scenario_runs import CommandOutcome, problems, run_command, tally
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


def test_tally_counts_exits_refusals_tracebacks_and_problems():
    drawn = Drawn({"methods": ["radauIIA7"]})
    result = {"count": 0, "loaded": 0, "refused": 0, "refused_by_key": {}, "exit_codes": {},
              "tracebacks": [], "timeouts": [], "problems": []}
    failed = CommandOutcome("traceback", "", "",
                            "Traceback (most recent call last):\n  x\nKeyError: 'n'")
    tally(result, drawn, {"variants": CommandOutcome(0, "", ""), "tune": failed}, None,
          ["tune: exit traceback", "variants: exit 1"])
    tally(result, drawn, {"variants": CommandOutcome(2, "", "error: f: key 'n.to': ...")},
          "f: key 'n.to': expected a size", [])
    assert (result["count"], result["loaded"], result["refused"]) == (2, 1, 1)
    assert result["refused_by_key"] == {"n": 1}          # a key's first word
    assert result["exit_codes"] == {"variants": {"0": 1, "2": 1}, "tune": {"traceback": 1}}
    assert result["tracebacks"][0]["first_lines"] == ["Traceback (most recent call last):", "  x",
                                                      "KeyError: 'n'"]
    assert result["problems"] == [{"problems": ["variants: exit 1"], "scenario": drawn.describe()}]
