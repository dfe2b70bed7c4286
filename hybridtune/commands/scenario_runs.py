"""The commands run in-process on a drawn scenario, and what is wrong with their outcomes.

variants, predict --dry-run and tune --dry-run on one scenario of commands/scenario_space: each must
end with exit 0, or exit 2 and one error line that, where the scenario does not load, names the
file and the key.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hybridtune.commands.main import _parser, main
from hybridtune.commands.scenario_space import Drawn
from hybridtune.describe.loader import load
from hybridtune.errors import HybridtuneError


@dataclass
class CommandOutcome:
    code: object              # the exit code, or "traceback" / "timeout"
    stdout: str
    stderr: str
    traceback: str = ""


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def run_command(argv: list[str], timeout_s: float = 0) -> CommandOutcome:
    """hybridtune ARGV in this process: its exit code and output; an exception that escapes main
    is a traceback."""
    out, err = io.StringIO(), io.StringIO()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    previous = signal.signal(signal.SIGALRM, _alarm) if timeout_s else None
    if timeout_s:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 2
        return CommandOutcome(code, out.getvalue(), err.getvalue())
    except _Timeout:
        return CommandOutcome("timeout", out.getvalue(), err.getvalue())
    except Exception:
        return CommandOutcome("traceback", out.getvalue(), err.getvalue(), traceback.format_exc())
    finally:
        if timeout_s:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        for signum, handler in handlers.items():     # tune installs its own
            signal.signal(signum, handler)


@lru_cache(maxsize=None)
def predict_has_dry_run() -> bool:
    """Whether `predict` takes --dry-run (without it, predict would run kerncraft: left out)."""
    predict = next(action for action in _parser()._subparsers._group_actions
                   if hasattr(action, "choices")).choices["predict"]
    return any("--dry-run" in action.option_strings for action in predict._actions)


def command_lines(path: Path, folder: Path) -> dict:
    """The three commands on a scenario file, each with a fresh store in folder."""
    lines = {"variants": ["variants", str(path)],
             "tune": ["tune", str(path), "--dry-run", "--db", str(folder / "tune.h5")]}
    if predict_has_dry_run():
        lines["predict"] = ["predict", str(path), "--dry-run", "--db", str(folder / "predict.h5")]
    return lines


def run_scenario(drawn: Drawn, folder: Path, timeout_s: float = 0) -> dict:
    """Write the scenario into folder and run the commands: {command: CommandOutcome}."""
    path = drawn.write(folder)
    lines = command_lines(path, folder)
    return {name: run_command(argv, timeout_s) for name, argv in lines.items()}


def load_error(drawn: Drawn, folder: Path) -> str | None:
    """What loading the written scenario refuses, or None."""
    try:
        load(folder / drawn.name, "scenario")
    except HybridtuneError as error:
        return str(error)
    return None


def _names_a_file(line: str) -> bool:
    """Whether an error line starts with an existing file (the scenario, a file beside it or a
    library file it refers to)."""
    match = re.match(r"error: (.+?)(?::\d+)?: ", line)
    return bool(match) and Path(match[1]).is_file()


def problems(drawn: Drawn, outcomes: dict, folder: Path, refused: str | None) -> list[str]:
    """What is wrong with the commands' outcomes: another exit code than 0 or 2, a traceback, an
    exit 2 without exactly one error line, a refused scenario whose error names no file and
    key, a scenario that loads but whose pool cannot be listed, or ranks above 1 without an
    MPI skeleton that load."""
    found = []
    if drawn.ranks_without_mpi and refused is None:
        found.append("ranks above 1 without an MPI skeleton loaded")
    for command, outcome in outcomes.items():
        text = outcome.stdout + outcome.stderr
        if outcome.code not in (0, 2):
            found.append(f"{command}: exit {outcome.code}\n{outcome.traceback or text[-2000:]}")
            continue
        if "Traceback" in text:
            found.append(f"{command}: a traceback in its output\n{text[-2000:]}")
        errors = [line for line in outcome.stderr.splitlines() if line.startswith("error:")]
        if outcome.code == 2 and len(errors) != 1:
            found.append(f"{command}: exit 2 with {len(errors)} error lines\n{outcome.stderr}")
        if refused is not None:
            if outcome.code != 2:
                found.append(f"{command}: exit {outcome.code} on a scenario that does not load "
                             f"({refused})")
            elif errors and not (_names_a_file(errors[0]) and "key '" in errors[0]):
                found.append(f"{command}: the error names no file and key: {errors[0]}")
    if refused is None and outcomes["variants"].code != 0:
        found.append(f"variants: exit {outcomes['variants'].code} on a scenario that loads\n"
                     f"{outcomes['variants'].stderr}")
    return found


def _last_lines(text: str, count: int = 3) -> list[str]:
    """A traceback's last lines: where it was raised and what."""
    return [line for line in text.strip().splitlines() if line.strip()][-count:]


def tally(result: dict, drawn: Drawn, outcomes: dict, refused: str | None, found: list) -> None:
    """Count one scenario into result (keys count, loaded, refused, refused_by_key, exit_codes per
    command, tracebacks, timeouts, problems): what the space-of-scenarios benchmark reports."""
    result["count"] += 1
    result["refused" if refused else "loaded"] += 1
    if refused:
        match = re.search(r"key '([\w-]+)", refused)
        key = match[1] if match else "(none)"
        result["refused_by_key"][key] = result["refused_by_key"].get(key, 0) + 1
    for command, outcome in outcomes.items():
        codes = result["exit_codes"].setdefault(command, {})
        codes[str(outcome.code)] = codes.get(str(outcome.code), 0) + 1
        if outcome.code == "traceback":
            result["tracebacks"].append({"command": command,
                                         "first_lines": _last_lines(outcome.traceback),
                                         "traceback": outcome.traceback,
                                         "scenario": drawn.describe()})
        elif outcome.code == "timeout":
            result["timeouts"].append({"command": command, "scenario": drawn.describe()})
    plain = [p for p in found if not p.split(":")[1].strip().startswith("exit traceback")]
    if plain:
        result["problems"].append({"problems": plain, "scenario": drawn.describe()})
