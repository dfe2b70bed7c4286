"""A command under mpiexec on emulated nodes of this machine: one rank per node, named and pinned."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hybridtune.errors import HybridtuneError
from hybridtune.measure.launch_env import child_environment, mpiexec_program

NODE_NAMES = "abcdefgh"


def emulated_nodes_command(argv: list[str], nodes: int) -> list[str]:
    """mpiexec with `nodes` ranks of argv, rank i on core i as node NODE_NAMES[i] (SLURMD_NODENAME:
    runtime/launch groups ranks by it)."""
    if not 1 <= nodes <= len(NODE_NAMES):
        raise HybridtuneError(f"emulated nodes: expected 1 to {len(NODE_NAMES)}, got {nodes}")
    command = [mpiexec_program()]
    for index in range(nodes):
        command += [":"] * bool(index) + ["-n", "1", "-env", "SLURMD_NODENAME", NODE_NAMES[index],
                                          "taskset", "-c", str(index), *argv]
    return command


def last_json(text: str) -> dict:
    """The last JSON document a command printed (one that starts a line with '{')."""
    text = text.strip()
    start = text.rindex("\n{") + 1 if "\n{" in text and not text.startswith("{") else text.find("{")
    if start < 0:
        raise HybridtuneError(f"expected a JSON document in the output, found: {text[-300:]!r}")
    return json.loads(text[start:])


def on_emulated_nodes(argv: list[str], nodes: int, cwd: Path, timeout_s: float = 3600) -> dict:
    """Run argv on emulated nodes outside any Slurm or PMI job around this process: the JSON its
    rank 0 printed last."""
    command = emulated_nodes_command(argv, nodes)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                          env=child_environment(os.environ), cwd=cwd)
    if done.returncode != 0:
        raise HybridtuneError(f"{' '.join(command[:8])} ... failed ({done.returncode}):\n"
                              f"{done.stderr[-3000:]}")
    return last_json(done.stdout)
