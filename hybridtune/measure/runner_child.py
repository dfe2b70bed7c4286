"""A runner process and its line protocol: started for a task, each read bounded, ended cleanly."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
import uuid
from pathlib import Path

from hybridtune.measure.launch_env import (child_environment, nested_mpi_command,
                                           step_environment, step_mpi_command)

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
INTERRUPTED = "interrupted by"
KILL_GRACE_S = 2.0         # a runner told to end (SIGTERM) is killed after this


class ChildFailed(Exception):
    """Why a runner gave no answer: a measurement status and its message."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class RunnerChild:
    """The runner process and its line protocol, every read bounded by a timeout; started for a
    task (measure/runner's MeasureTask: its threads, n, ranks, hosts and generated code)."""

    def __init__(self, runner: str, library: str, task, timeout_s: float):
        env = {**child_environment(os.environ), "OMP_NUM_THREADS": str(task.threads),
               "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
        command = [runner, library, str(task.n)]
        if task.hosts:            # a step across nodes of the allocation
            command = step_mpi_command(task.ranks, task.hosts, task.threads, command)
            env = {**step_environment(os.environ), **{k: v for k, v in env.items()
                                                      if k.startswith("OMP_")}}
        elif task.generated.mpi:  # ranks started by mpiexec, which dies with the process group
            command = nested_mpi_command(task.ranks, command, cores_per_rank=task.threads)
        else:
            env["HT_PARENT_PID"] = str(os.getpid())
        # an MPI runner's ranks write why they gave up into REASON.RANK (beside the library, on
        # whatever file system the ranks share): their stderr may be lost when one aborts the job
        self.reason = (str(Path(library).parent / f".reason-{uuid.uuid4().hex}")
                       if task.generated.mpi else None)
        if self.reason:
            env["HT_REASON_FILE"] = self.reason
        self.timeout_s = timeout_s
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                        start_new_session=True)

    def send(self, line: str) -> None:
        try:
            self.process.stdin.write((line + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            raise self._died() from None

    def read(self, count: int | None = None) -> bytes:
        """count bytes, or one line when count is None."""
        deadline = time.monotonic() + self.timeout_s
        data = b""
        fd = self.process.stdout.fileno()
        while count is None and not data.endswith(b"\n") or count is not None and len(data) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise ChildFailed("timeout", f"no answer within {self.timeout_s:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20 if count is None else min(1 << 20, count - len(data)))
            if not chunk:
                raise self._died()
            data += chunk
        return data

    def _reasons(self) -> list[str]:
        """What the ranks wrote into their reason files (removed here), rank by rank."""
        if not self.reason:
            return []
        files = sorted(Path(self.reason).parent.glob(Path(self.reason).name + ".*"),
                       key=lambda f: int(f.suffix[1:]) if f.suffix[1:].isdigit() else -1)
        lines = []
        for file in files:
            try:
                lines += file.read_text(errors="replace").strip().splitlines()
                file.unlink()
            except OSError:
                pass
        return lines

    def _died(self) -> ChildFailed:
        code = self.process.wait(timeout=self.timeout_s)
        reasons = self._reasons()
        rest = "\n".join(line for line in self.process.stderr.read().decode(
            errors="replace").strip().splitlines() if line not in reasons)
        own = "\n".join(reasons)[:1000]       # the ranks' own words first, then stderr's tail
        err = "\n".join(part for part in (own, rest[-(2000 - len(own)):].strip()) if part)
        if code < 0 and signal.Signals(-code) in SHUTDOWN_SIGNALS:
            return ChildFailed("crash", f"{INTERRUPTED} {signal.Signals(-code).name}")
        if code < 0:
            return ChildFailed("crash", f"killed by signal {signal.Signals(-code).name}"
                                + (f": {err}" if err else ""))
        return ChildFailed("crash", f"exited with status {code}" + (f": {err}" if err else ""))

    def kill(self) -> None:
        """End the runner's process group: SIGTERM first, so that a launcher (mpiexec, srun)
        can end its ranks and its step, SIGKILL after KILL_GRACE_S."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=5)
            except (ChildFailed, subprocess.TimeoutExpired):
                pass
        self.kill()
        self._reasons()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()
