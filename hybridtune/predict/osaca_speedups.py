"""Run-time changes to OSACA, kerncraft's in-core analyser, that save time and change no result.

jobs/bench_analysis_speed.sh times and compares the last two. The kerncraft adapter imports this
module on first use, so a missing OSACA fails an analysis, not an import.
"""

from __future__ import annotations

import pickle
import sys

import osaca.semantics.hw_model as hw_model
from osaca.parser.parser_x86att import ParserX86ATT
from osaca.semantics.kernel_dg import KernelDG


def patch_osaca() -> None:
    """Every change below (idempotent)."""
    share_models()
    memoise_att_lines()
    dependencies_in_process()


def share_models() -> None:
    """Load each OSACA architecture model once per process: OSACA reloads its pickled model for
    every MachineModel it builds (about 0.5 s each, several per kernel), and reads it only."""
    original = hw_model.MachineModel._get_cached
    if getattr(original, "shared_per_process", False):
        return
    loaded: dict = {}

    def shared(self, filepath):
        key = str(filepath)
        if key not in loaded:
            loaded[key] = original(self, filepath)
        return loaded[key]

    shared.shared_per_process = True
    hw_model.MachineModel._get_cached = shared


PARSED_LINES_KEPT = 50_000      # distinct assembly lines a process keeps parsed


def memoise_att_lines() -> None:
    """OSACA parses each line of AT&T assembly with pyparsing (about 2 ms a line: half of an
    analysis), and the same lines recur: kerncraft parses a loop's file twice, and the loops of a
    run share most of their instructions. A line's parse depends on its text alone, so the first
    parse of a text serves each later one as a copy of its own (the analysis writes into the
    forms), its line number set."""
    original = ParserX86ATT.parse_line
    if getattr(original, "memoised", False):
        return
    parsed: dict = {}

    def parse_line(self, line, line_number=None):
        kept = parsed.get(line)
        if kept is None:
            form = original(self, line, line_number)
            if len(parsed) >= PARSED_LINES_KEPT:
                parsed.clear()
            parsed[line] = pickle.dumps(form, pickle.HIGHEST_PROTOCOL)
            return form
        # a deep copy, several times faster than copy.deepcopy; the bytes are this process's own
        form = pickle.loads(kept)
        form.line_number = line_number
        return form

    parse_line.memoised, parse_line.original = True, original
    ParserX86ATT.parse_line = parse_line


def dependencies_in_process() -> None:
    """OSACA looks for a loop's carried dependencies in a Manager and one process per CPU where the
    loop has 50 instructions or more, polls them every 0.2 s and keeps what they found within
    10 s. An analysis already runs one per core: the processes only wait for the poll, and a
    loaded host could cut a search short. The search runs in the analysis's own process; its
    result does not depend on the order paths are found in."""
    KernelDG.INSTRUCTION_THRESHOLD = sys.maxsize
