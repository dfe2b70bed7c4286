"""The host's other load during a timing, read from /proc, and the doubts it casts on the timing.

A wide interval casts doubt on a timing too.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

# A timing is doubtful (re-timed, then flagged in the store, the chosen line, --json and the notes):
BUSY_SHARE = 0.25       # when others (processes outside the measured one, and the hypervisor's
#                         steal) took at least this share of the cores it needs during the timing:
#                         one preempted OpenMP thread holds up every barrier, and the median of the
#                         repetitions follows a load that lasts through half of them
WIDE_LIMIT = 0.25       # or when its 95% interval is wider than +-25% of the median: far wider
#                         than quiet timings, far narrower than those under a competing load
#                         (docs/benchmarks.md#constants-set-from-measurements)
RETIMINGS = 2           # a doubtful timing is timed again at most this often; the quietest kept
TOP_PROCESSES = 3       # other processes named in the load record, the busiest first

BUSY_FIELDS = (0, 1, 2, 5, 6)   # user, nice, system, irq, softirq of a cpuN line of /proc/stat
STEAL_FIELD = 7


@dataclass(frozen=True)
class Process:
    """One process as /proc/PID/stat gives it (times in clock ticks)."""
    name: str
    ppid: int
    session: int
    own: int            # utime + stime


@dataclass(frozen=True)
class Look:
    """One look at /proc: per CPU its busy and steal ticks, the run queue, every process, and the
    threads (id -> (last CPU, ticks)) of the measured processes and of this one."""
    at: float
    cpus: dict = field(default_factory=dict)        # cpu -> (busy ticks, steal ticks)
    running: int = 0                                # procs_running
    processes: dict = field(default_factory=dict)   # pid -> Process
    measured: frozenset = frozenset()               # pids of the measured process trees
    threads: dict = field(default_factory=dict)     # tid -> (cpu, ticks): measured ones
    own_threads: dict = field(default_factory=dict)   # tid -> (cpu, ticks): this process's


def _stat_fields(text: str) -> tuple[str, list[str]]:
    """(comm, the fields after it) of a /proc/PID/stat line; comm may hold spaces and ')'."""
    right = text.rindex(")")
    return text[text.index("(") + 1:right], text[right + 2:].split()


def parse_process(text: str) -> Process:
    name, rest = _stat_fields(text)       # rest[0] is field 3 (state) of proc(5)
    return Process(name, int(rest[1]), int(rest[3]), int(rest[11]) + int(rest[12]))


def parse_thread(text: str) -> tuple[int, int]:
    """(last CPU, utime + stime) of a /proc/PID/task/TID/stat line."""
    _, rest = _stat_fields(text)
    return int(rest[36]), int(rest[11]) + int(rest[12])


def parse_cpus(text: str) -> tuple[dict, int]:
    """cpu -> (busy ticks, steal ticks), and procs_running, from /proc/stat."""
    cpus, running = {}, 0
    for line in text.splitlines():
        name, _, values = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            numbers = [int(v) for v in values.split()]
            steal = numbers[STEAL_FIELD] if len(numbers) > STEAL_FIELD else 0
            cpus[int(name[3:])] = (sum(numbers[i] for i in BUSY_FIELDS if i < len(numbers)),
                                   steal)
        elif name == "procs_running":
            running = int(values)
    return cpus, running


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:         # the process ended meanwhile, or /proc is not there
        return None


def _parsed(path: str, parse):
    """parse() of a /proc file's text, or None where it is gone or unreadable (a process that
    ended meanwhile)."""
    text = _read(path)
    if text is None:
        return None
    try:
        return parse(text)
    except (ValueError, IndexError):
        return None


def tree(processes: dict, roots) -> frozenset:
    """The pids of the process trees started at roots: their sessions (a runner starts one of its
    own) and every descendant."""
    roots = set(roots)
    found = {pid for pid, p in processes.items() if pid in roots or p.session in roots}
    children: dict = {}
    for pid, p in processes.items():
        children.setdefault(p.ppid, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return frozenset(found)


def _threads(pids, proc: str) -> dict:
    threads = {}
    for pid in pids:
        try:
            tids = os.listdir(f"{proc}/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            found = _parsed(f"{proc}/{pid}/task/{tid}/stat", parse_thread)
            if found is not None:
                threads[int(tid)] = found
    return threads


def look(roots, proc: str = "/proc") -> Look | None:
    """What /proc says now of the CPUs, the processes and the trees started at roots (None
    where there is no /proc to read)."""
    at = time.monotonic()
    text = _read(f"{proc}/stat")
    if text is None:
        return None
    cpus, running = parse_cpus(text)
    processes = {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return None
    for entry in entries:
        found = _parsed(f"{proc}/{entry}/stat", parse_process) if entry.isdigit() else None
        if found is not None:
            processes[int(entry)] = found
    measured = tree(processes, roots)
    return Look(at, cpus, running, processes, measured, _threads(measured, proc),
                _threads([os.getpid()], proc))


def _spent(before: dict, after: dict) -> dict:
    """cpu -> ticks the threads spent between two looks (all of a thread's new since the first),
    each counted on the CPU it ran on last (the measured threads are bound to one core each)."""
    spent: dict = {}
    for tid, (cpu, ticks) in after.items():
        spent[cpu] = spent.get(cpu, 0) + max(0, ticks - before.get(tid, (cpu, 0))[1])
    return spent


def _others(before: Look, after: Look) -> dict:
    """name -> ticks the processes outside the measured trees and this one spent between the
    looks (a new process: all its own; one that ended meanwhile is not seen)."""
    skip = before.measured | after.measured | {os.getpid()}
    spent: dict = {}
    for pid, p in after.processes.items():
        if pid in skip:
            continue
        old = before.processes.get(pid)
        ticks = p.own if old is None or old.own > p.own else p.own - old.own  # new or reused
        if ticks:
            spent[p.name] = spent.get(p.name, 0) + ticks
    return spent


def other_load(before: Look, after: Look, cores: int, ticks_per_s: float | None = None
               ) -> dict:
    """The load record of a timing between two looks, as JSON: on the `cores` CPUs the measured
    threads ran on most (the cores it needs), the CPU time others spent there (busy ticks less the
    measured threads' and this process's) and the steal, each in cores (per second of the
    timing), their share of the cores it needs, and what the measured threads got there; the run
    queue at both looks; the busiest other processes of the whole machine."""
    hz = ticks_per_s or os.sysconf("SC_CLK_TCK")
    window = max(after.at - before.at, 1e-9)
    measured = _spent(before.threads, after.threads)
    mine = _spent(before.own_threads, after.own_threads)
    ranked = sorted((cpu for cpu in measured if measured[cpu] > 0),
                    key=lambda cpu: (-measured[cpu], cpu))
    # where the measured threads ran on fewer CPUs than it needs: the first this process may use
    spare = [cpu for cpu in sorted(os.sched_getaffinity(0)) + sorted(after.cpus)
             if cpu in after.cpus]
    used = sorted(list(dict.fromkeys(ranked[:cores] + spare))[:cores])
    busy = steal = 0
    for cpu in used:
        old, new = before.cpus.get(cpu, (0, 0)), after.cpus.get(cpu, (0, 0))
        busy += new[0] - old[0]
        steal += new[1] - old[1]
    timed = sum(measured.get(cpu, 0) for cpu in used)
    others = max(0, busy - timed - sum(mine.get(cpu, 0) for cpu in used))
    seconds = hz * window
    processes = sorted(_others(before, after).items(), key=lambda item: (-item[1], item[0]))
    load = {"cores": cores, "cpus": used, "window_s": round(window, 4),
            "measured_cores": round(timed / seconds, 3),
            "others_cores": round(others / seconds, 3), "steal_cores": round(steal / seconds, 3),
            "run_queue": [before.running, after.running],
            "processes": [[name, round(ticks / seconds, 3)]
                          for name, ticks in processes[:TOP_PROCESSES]]}
    load["share"] = round((load["others_cores"] + load["steal_cores"]) / max(cores, 1), 3)
    return load


class Watch:
    """Looks at /proc when a timing starts and when it ends; a watch with nothing to look at
    (no /proc) gives no load record."""

    def __init__(self, roots, cores: int):
        self.roots, self.cores = tuple(roots), cores
        self.before = look(self.roots)

    def load(self) -> dict | None:
        after = look(self.roots) if self.before is not None else None
        if after is None:
            return None
        return other_load(self.before, after, self.cores)


def doubts(ci_rel: float | None, load: dict | None) -> list[str]:
    """Why a timing (its interval's relative half width, its load record) means little: the
    host was busy (BUSY_SHARE), its interval is too wide (WIDE_LIMIT); none for a sound one."""
    why = []
    if isinstance(load, dict) and load.get("share") is not None and load["share"] >= BUSY_SHARE:
        cores = load.get("cores", 1)
        steal = load.get("steal_cores") or 0.0
        took = f"{load.get('others_cores', 0.0):.1f}" + (f" (and steal time {steal:.1f})"
                                                         if steal >= 0.05 else "")
        why.append(f"busy: other processes used {took} of the {cores} "
                   f"core{'s' if cores != 1 else ''} it needs")
    if ci_rel is None or not math.isfinite(ci_rel):
        why.append(f"interval unbounded, wider than the {100 * WIDE_LIMIT:.0f}% limit")
    elif ci_rel > WIDE_LIMIT:
        why.append(f"interval +-{100 * ci_rel:.0f}% wider than the {100 * WIDE_LIMIT:.0f}% limit")
    return why


def row_doubts(row: dict) -> list[str]:
    """doubts() of a stored ok measurement row (its load record is under hardware's "load";
    rows measured before there was one have only their interval judged)."""
    hardware = row.get("hardware")
    return doubts(row.get("ci_rel"), hardware.get("load") if isinstance(hardware, dict) else None)


def quietest(attempts: list) -> int:
    """Of (ci_rels, load) per attempt (the intervals of the variants it timed, the load while it
    did), the index of the one to keep: the fewest doubts, then the lowest share of others'
    load, then the narrowest widest interval."""
    def key(index):
        ci_rels, load = attempts[index]
        share = load.get("share") if isinstance(load, dict) else None
        widths = [c if c is not None and math.isfinite(c) else math.inf for c in ci_rels]
        return (sum(len(doubts(c, load)) for c in ci_rels), share or 0.0,
                max(widths, default=math.inf), index)
    return min(range(len(attempts)), key=key)
