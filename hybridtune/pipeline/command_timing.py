"""A command timed in a child process (wall and CPU seconds), and a benchmark's entry around it."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from hybridtune.measure.provenance import tree_state
from hybridtune.pipeline.atomic_files import write_atomically


@dataclass(frozen=True)
class CommandTiming:
    wall_s: float
    cpu_s: float            # user + system of the child and of what it waited for
    exit: int
    stdout: str
    stderr: str


def timed_command(argv: list[str], env: dict | None = None, keep_stdout: bool = False
                  ) -> CommandTiming:
    """Run argv to its end: its wall and CPU time, exit status and output (stdout only if kept)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, text=True, stderr=subprocess.PIPE,
                          stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return CommandTiming(wall, cpu, done.returncode, done.stdout or "", done.stderr)


def bench_entry(label: str, checkout: Path, runs: list) -> dict:
    """A benchmark's record of runs: what was timed (label, the checkout's commit), when, where."""
    return {"label": label, "commit": tree_state(checkout, ())["commit"][:7],
            "checkout": str(checkout),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "cpus": os.cpu_count(),
            "load_1min_at_end": round(os.getloadavg()[0], 2), "runs": runs}


def append_entry(path: Path, entry: dict) -> None:
    """Add entry to the document {"entries": [...]} at path (made if absent), written whole."""
    document = json.loads(path.read_text()) if path.is_file() else {"entries": []}
    document["entries"].append(entry)
    write_atomically(str(path), lambda handle: handle.write(
        (json.dumps(document, indent=1) + "\n").encode()))
