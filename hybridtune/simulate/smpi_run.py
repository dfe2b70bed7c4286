"""One simulated run of an MPI variant: smpirun on a SimGrid platform, ht_mpi_runner over stdin.

It gives the simulated seconds per step, the wall time and the peak memory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hybridtune.describe.platform import Platform, load_platform
from hybridtune.errors import RequestError
from hybridtune.simulate.smpi import BENCHED, INJECTED, smpi_runner, smpi_tools

MODES = ("injected", "benched")
KILL_GRACE_S = 2.0
TAIL_LINES = 12
# Every simulated run (smpirun options), and why:
SMPI_OPTIONS = (
    "--log=root.thres:critical",       # SimGrid's configuration and info lines off stderr
    "--cfg=smpi/coll-selector:mpich",  # collectives pick their algorithm as mpich does: the MPI
                                       # the variants run on natively (the mpich wheel)
    # SMPI's default latency and bandwidth factors calibrate one old gigabit cluster; our
    # platforms state their links' published figures, taken as they are: a ping-pong of S bytes
    # between two hosts of a flat cluster then takes 2 lat + bb_lat + S / bw (checked, 8 B-16 MiB)
    "--cfg=smpi/lat-factor:0:1",
    "--cfg=smpi/bw-factor:0:1",
    # SMPI drops computation bursts under 1 us by default: every injected or benched second counts
    "--cfg=smpi/cpu-threshold:0",
)
MODE_OPTIONS = {
    # only the injected seconds are computation (SMPI_SAMPLE_DELAY); the buffers fold onto one
    # shared file per allocation site ('local' maps each buffer once, untouched; the default
    # 'global' maps a file block by block and fails or starts slowly at many ranks of large n:
    # docs/benchmarks.md#constants-set-from-measurements)
    "injected": ("--cfg=smpi/simulate-computation:no", "--cfg=smpi/shared-malloc:local"),
    # the real computation between MPI calls is timed here and simulated as that many seconds
    "benched": ("--cfg=smpi/simulate-computation:yes",),
}


@dataclass(frozen=True)
class SimulatedRun:
    """A simulated run: seconds per step in simulated time (MPI_Wtime, the slowest rank), the
    wall time, CPU time and peak memory (max RSS of smpirun's process tree) it took here; failures
    are data."""
    ranks: int
    n: int
    steps: int
    mode: str
    status: str                      # "ok" or "failed"
    seconds_per_step: float | None = None
    wall_s: float = 0.0
    max_rss_bytes: int = 0
    cpu_s: float = 0.0               # user + system: the wall time an idle core would take
    message: str = ""
    finite: bool | None = None       # benched runs: every rank's block finite after the steps


def host_speed_option(platform: Platform) -> str:
    """smpi/host-speed as the platform's host speed: SMPI simulates a burst of d seconds (injected,
    or timed here) as d x host-speed flops on a platform host, so d simulated seconds."""
    return f"--cfg=smpi/host-speed:{platform.speed_flops:.17g}f"


def _commands(mode: str, h: float, t0: float, steps: int) -> str:
    if mode == "injected":     # the folded state is never computed, never reset, never checked
        return f"time {t0!r} {h!r} 1\ntime {t0!r} {h!r} {steps}\nquit\n"
    return f"rep {t0!r} {h!r} 1\ntime {t0!r} {h!r} {steps}\nfinite\nquit\n"


def _drain(stream, into: list) -> threading.Thread:
    thread = threading.Thread(target=lambda: into.append(stream.read()), daemon=True)
    thread.start()
    return thread


def _end(pid: int) -> tuple[int, object]:
    """End the process group (SIGTERM, then SIGKILL after KILL_GRACE_S) and reap its leader."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + (grace or 30.0)
        while time.monotonic() < deadline:
            reaped, status, usage = os.wait4(pid, os.WNOHANG)
            if reaped:
                return status, usage
            time.sleep(0.05)
    _, status, usage = os.wait4(pid, 0)
    return status, usage


def _group_memory(group: int) -> int:
    """The memory of a process group now, in bytes: the larger of its processes' resident sets
    together and the highest resident set any of them reached (VmHWM). ru_maxrss would count
    the resident set the child inherited from this process when it was forked."""
    together, highest = 0, 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[2]) != group:
                    continue
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except (OSError, ValueError, IndexError):
            continue              # gone meanwhile, or a kernel thread
        together += int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        highest = max(highest, int(fields.get("VmHWM", "0 kB").split()[0]) * 1024)
    return max(together, highest)


def _run(command: list[str], stdin: str, env: dict, timeout_s: float
         ) -> tuple[str, str, int | None, dict]:
    """stdout, stderr, exit code (None on timeout) and the costs (wall_s, cpu_s, max_rss_bytes)
    of a command run in its own process group."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, start_new_session=True)
    out, err = [], []
    readers = [_drain(process.stdout, out), _drain(process.stderr, err)]
    try:
        process.stdin.write(stdin.encode())
        process.stdin.close()
    except BrokenPipeError:
        pass
    code, peak = None, 0
    while time.monotonic() - started < timeout_s:
        peak = max(peak, _group_memory(process.pid))    # sampled every 50 ms
        reaped, status, usage = os.wait4(process.pid, os.WNOHANG)
        if reaped:
            code = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.05)
    else:
        status, usage = _end(process.pid)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join(timeout=5.0)
    for stream in (process.stdout, process.stderr):
        stream.close()
    text = [b"".join(chunks).decode(errors="replace") for chunks in (out, err)]
    costs = dict(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, max_rss_bytes=peak)
    return text[0], text[1], code, costs


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-TAIL_LINES:])


def _placed(platform: Platform, ranks: int, placement: tuple) -> tuple:
    """The host of each rank: the platform's first `ranks`, or the placement given."""
    if not placement:
        platform.check_ranks(ranks)
        return platform.hosts[:ranks]
    unknown = sorted(set(placement) - set(platform.hosts))
    if len(placement) != ranks or unknown:
        raise RequestError(f"{platform.path}: a placement of {len(placement)} ranks for {ranks}"
                           + (f", on hosts it does not have ({', '.join(unknown[:3])})"
                              if unknown else ""))
    return tuple(placement)


def simulate(library: str | Path, n: int, ranks: int, platform: Platform | str | Path, steps: int,
             h: float, t0: float = 0.0, mode: str = "injected", timeout_s: float = 600.0,
             options: tuple = (), placement: tuple = ()) -> SimulatedRun:
    """Run a variant library built by build_simulated on the platform's first `ranks` hosts (one
    rank each; placement: the host of each rank instead) under smpirun: `steps` steps after one
    untimed, their simulated seconds per step. A request that cannot run raises (PlatformError,
    RequestError); a run that crashes, times out or answers what cannot be read is a failed
    SimulatedRun with the end of its stderr. options: more smpirun options, after (and so over)
    SMPI_OPTIONS: a platform's calibrated smpi/lat-factor and smpi/bw-factor."""
    if mode not in MODES:
        raise RequestError(f"simulation mode {mode!r}: expected one of {', '.join(MODES)}")
    if steps < 1 or ranks < 1 or n < ranks:
        raise RequestError(f"simulate: {steps} steps of n = {n} on {ranks} ranks: expected at "
                           "least one step and one rank, and n >= ranks")
    platform = platform if isinstance(platform, Platform) else load_platform(platform)
    hosts = _placed(platform, ranks, placement)
    library = Path(library)
    built_for = {INJECTED: "injected", BENCHED: "benched"}.get(library.stem)
    if built_for and built_for != mode:
        raise RequestError(f"{library}: built for {built_for} runs, asked to run {mode} "
                           "(build_simulated with compute_s for injected runs, without for "
                           "benched)")
    tools, runner = smpi_tools(), smpi_runner()
    base = dict(ranks=ranks, n=n, steps=steps, mode=mode)
    with tempfile.TemporaryDirectory(prefix="ht-smpi-") as folder:
        hostfile = Path(folder) / "hosts.txt"
        hostfile.write_text("".join(f"{host}\n" for host in hosts))
        command = [tools.smpirun, "-np", str(ranks), "-platform",
                   str(Path(platform.path).resolve()), "-hostfile", str(hostfile),
                   *SMPI_OPTIONS, *options, *MODE_OPTIONS[mode], host_speed_option(platform),
                   str(runner), str(library.resolve()), str(n)]
        # smpirun copies the runner once per rank into TMPDIR: a folder of this run's own, gone
        # with it even where the run is killed
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": folder}
        out, err, code, costs = _run(command, _commands(mode, h, t0, steps), env, timeout_s)
    base.update(costs)
    if code is None:
        return SimulatedRun(**base, status="failed", message=f"no end within {timeout_s:g} s "
                            f"(killed); stderr: {_tail(err)}")
    lines = out.split()
    expected = 2 if mode == "injected" else 3
    try:
        if code != 0 or len(lines) != expected:
            raise ValueError
        seconds = float(lines[1])
        finite = None if mode == "injected" else lines[2] == "1"
    except ValueError:
        return SimulatedRun(**base, status="failed", message=f"smpirun exited with status {code} "
                            f"and printed {out.strip()[-200:]!r}; stderr: {_tail(err)}")
    if finite is False:
        return SimulatedRun(**base, status="failed", seconds_per_step=seconds, finite=False,
                            message=f"the state is not finite after {steps + 1} steps")
    return SimulatedRun(**base, status="ok", seconds_per_step=seconds, finite=finite)
