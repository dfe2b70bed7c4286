"""Benchmark "The space of scenarios": scenarios drawn from the shipped library, commands in-process.

Draws scenarios (hybridtune/commands/scenario_space.py), valid ones and ones with a fault, and runs `variants`,
`predict --dry-run` and `tune --dry-run` on each in this process. Every command must end with exit 0, or exit 2 and one error line; counts the
exit codes per command and keeps every traceback (its first lines and the scenario's text).
Writes data/bench/scenarios.json (again every 50 scenarios, so a stopped run keeps its counts)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from hybridtune.commands.scenario_runs import (load_error, predict_has_dry_run, problems,
                                               run_scenario, tally)
from hybridtune.commands.scenario_space import COMMANDS, scenarios
from hybridtune.describe.library import PROJECT_ROOT


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="scenarios to draw (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds one command may take before it counts as a timeout")
    parser.add_argument("--output", default=str(PROJECT_ROOT / "data/bench/scenarios.json"))
    args = parser.parse_args()

    exits = {command: {} for command in COMMANDS}
    result = {"count_asked": args.count, "count": 0, "seed": args.seed,
              "predict_dry_run": predict_has_dry_run(), "loaded": 0, "refused": 0, "refused_by_key": {},
              "exit_codes": exits, "tracebacks": [], "problems": [], "timeouts": [],
              "seconds": 0.0, "scenarios_per_second": 0.0,
              "machine": {"python": platform.python_version(), "cpus": len(
                  os.sched_getaffinity(0))},
              "command": f"jobs/bench_scenarios.sh --count {args.count} --seed {args.seed}"}
    if not result["predict_dry_run"]:
        result["note"] = "predict has no --dry-run here: variants and tune only"
    started = time.monotonic()

    def write() -> None:
        result["seconds"] = round(time.monotonic() - started, 1)
        result["scenarios_per_second"] = round(result["count"] / max(result["seconds"], 1e-9), 3)
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(result, indent=1) + "\n")

    @seed(args.seed)
    @settings(max_examples=args.count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(scenarios())
    def one(drawn):
        if result["count"] >= args.count:
            return
        with tempfile.TemporaryDirectory(prefix="scenario-") as name:
            folder = Path(name)
            outcomes = run_scenario(drawn, folder, args.timeout)
            refused = load_error(drawn, folder)
            found = problems(drawn, outcomes, folder, refused)
        tally(result, drawn, outcomes, refused, found)
        if result["count"] % 50 == 0:
            write()
            print(f"{result['count']} scenarios, {result['seconds']} s, "
                  f"{len(result['tracebacks'])} tracebacks, {len(result['problems'])} problems",
                  file=sys.stderr, flush=True)

    one()
    write()
    print(json.dumps({k: result[k] for k in ("count", "loaded", "refused", "refused_by_key",
                                            "exit_codes",
                                            "seconds", "scenarios_per_second")}, indent=1))
    print(f"{len(result['tracebacks'])} tracebacks, {len(result['problems'])} other problems, "
          f"{len(result['timeouts'])} timeouts; written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
