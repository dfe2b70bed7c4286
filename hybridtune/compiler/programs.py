"""Native benchmark programs: built once by the compiler adapter, run with an OpenMP team.

Their JSON output is read back.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hybridtune.compiler.build import build
from hybridtune.errors import HybridtuneError


def omp_environment(threads: int) -> dict[str, str]:
    """The child's environment: the team size and threads bound close, one per core."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OMP_PLACES="cores", OMP_PROC_BIND="close",
               OMP_DYNAMIC="false")
    return env


def build_program(name: str, source: str, mpi: bool = False) -> Path:
    """Compile one benchmark program (cached; with mpi, as an MPI program); a compiler error
    raises HybridtuneError."""
    result = build(name, {name + ".c": source}, shared=False, mpi=mpi)
    if not result.ok or result.path is None:
        raise HybridtuneError(f"building {name} failed: {result.message}")
    return result.path


def run_json(program: Path, args: list[str], threads: int, timeout_s: float,
             launcher: tuple = (), env: dict | None = None) -> dict:
    """Run a built benchmark with `threads` OpenMP threads (through launcher, a command prefix
    such as mpiexec's, in env where given); its JSON output, or HybridtuneError."""
    name = program.name
    try:
        result = subprocess.run([*launcher, str(program), *args], capture_output=True, text=True,
                                env=env if env is not None else omp_environment(threads),
                                timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise HybridtuneError(f"{name} {' '.join(args)} timed out after {timeout_s:g} s "
                              f"with {threads} threads") from None
    except OSError as exc:
        raise HybridtuneError(f"{name} could not be started: {exc}") from None
    if result.returncode != 0:
        message = result.stderr.strip()[-2000:] or "(no message)"
        raise HybridtuneError(f"{name} {' '.join(args)} failed with exit status "
                              f"{result.returncode} with {threads} threads: {message}")
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError as exc:
        raise HybridtuneError(f"{name} printed no valid JSON ({exc}): "
                              f"{result.stdout.strip()[-500:]!r} {result.stderr.strip()[-500:]}") from None
    if not isinstance(data, dict):
        raise HybridtuneError(f"{name} printed {type(data).__name__} JSON, expected an object")
    return data
