"""Executors that run the pipeline's tasks: in this process, or spread over the nodes of an MPI job.

Rank 0 schedules: tasks wait in submission order and go to the first node with a free slot (one
slot per node for timings, one per core for analyses); the node of rank 0 runs its tasks in threads
of rank 0, every other node's first rank runs `serve`. No rank blocks in an MPI call: messages are
probed and requests tested between short sleeps that grow to POLL_S while idle, so a waiting rank
uses about 1% of a core and signal handlers run promptly.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import traceback
from collections import deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor

from hybridtune.errors import HybridtuneError
from hybridtune.runtime import signals
from hybridtune.runtime.launch import POLL_S, Backoff, Launch, wait_for

TAG_STOP = 3
TAG_BASES = itertools.count(100, 10)    # each NodeExecutor its own pair of tags: task, result
_POOLS: dict = {}                      # initializer -> this rank's process pool (see in_process)


class RemoteTaskError(HybridtuneError):
    """A task raised on another rank; the message carries that rank's traceback."""


class InlineExecutor(Executor):
    """Runs each task at submission, in this process: the direct launcher's executor."""

    capacity = 1

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:      # a task's failure belongs to its future
            future.set_exception(error)
        return future


def in_process(initializer, fn, args):
    """Run fn(*args) in this rank's process pool (one process per usable core, started once)."""
    pool = _POOLS.get(initializer)
    if pool is None:
        pool = _POOLS[initializer] = ProcessPoolExecutor(
            max_workers=len(os.sched_getaffinity(0)), initializer=initializer)
    return pool.submit(fn, *args).result()


class PooledExecutor(Executor):
    """Tasks run in a process pool on whichever node takes them (kerncraft analyses)."""

    def __init__(self, nodes: Executor, initializer=None):
        self.nodes = nodes
        self.initializer = initializer

    def submit(self, fn, /, *args, **kwargs) -> Future:
        return self.nodes.submit(in_process, self.initializer, fn, args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.nodes.shutdown(wait=wait, cancel_futures=cancel_futures)


def _outcome(fn, args) -> tuple:
    try:
        return "ok", fn(*args)
    except Exception:
        return "error", traceback.format_exc(limit=8)


class NodeExecutor(Executor):
    """Rank 0's executor over the job's nodes: at most `slots(node)` tasks in flight per node; a
    spanning task holds whole nodes."""

    def __init__(self, launch: Launch, slots=lambda node: 1):
        self.comm, self.mpi = launch.comm, launch.mpi
        self.slots = {node.ranks[0]: max(1, slots(node)) for node in launch.nodes}
        self.names = {node.ranks[0]: node.name for node in launch.nodes}
        self.capacity = sum(self.slots.values())
        self.tag = next(TAG_BASES)
        self._ids = itertools.count()
        self._pending: deque = deque()
        self._busy: dict[int, Future] = {}              # task id -> future
        self._where: dict[int, tuple] = {}              # task id -> leader ranks it holds
        self._local = ThreadPoolExecutor(max_workers=self.slots[0], thread_name_prefix="node0")
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()                  # a task submitted or finished here
        self._sends: list = []
        self._thread = threading.Thread(target=self._progress, name="scheduler", daemon=True)
        self._thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if kwargs:
            raise TypeError("NodeExecutor tasks take positional arguments only")
        return self._queue(1, fn, args)

    def submit_spanning(self, width: int, fn, /, *args) -> Future:
        """A task that needs `width` whole nodes (an MPI program across them): it waits until
        that many nodes run nothing, holds them all, and runs on the first with the nodes' names
        (a tuple) as its last argument. Tasks behind it wait meanwhile, so the nodes drain."""
        if not 1 <= width <= len(self.slots):
            raise HybridtuneError(f"a task spanning {width} nodes, the job has {len(self.slots)}")
        return self._queue(width, fn, args)

    def _queue(self, width: int, fn, args) -> Future:
        future: Future = Future()
        with self._lock:
            self._pending.append((future, fn, args, width))
        self._wake.set()
        return future

    def _load(self, leader: int) -> int:
        """Tasks on the node, a spanning task counting as all its slots."""
        return sum(self.slots[leader] if len(where) > 1 else 1
                   for where in self._where.values() if leader in where)

    def _free(self, leader: int) -> bool:
        return self._load(leader) < self.slots[leader]

    def _take(self) -> tuple | None:
        """The next waiting task and the nodes it gets, or None (none waits, or the first
        waiting spanning task has not its nodes yet)."""
        future, fn, args, width = self._pending[0]
        if width == 1:
            leader = next((leader for leader in self.slots if self._free(leader)), None)
            if leader is None:
                return None
            leaders = (leader,)
        else:
            idle = [leader for leader in self.slots if self._load(leader) == 0]
            if len(idle) < width:
                return None
            leaders = tuple(idle[:width])
            args = args + (tuple(self.names[leader] for leader in leaders),)
        self._pending.popleft()
        return future, fn, args, leaders

    def _dispatch(self) -> bool:
        """Send waiting tasks to nodes with a free slot, in order; whether any was sent."""
        assigned = []
        with self._lock:
            while self._pending:
                taken = self._take()
                if taken is None:
                    break
                future, fn, args, leaders = taken
                if future.set_running_or_notify_cancel():
                    task = next(self._ids)
                    self._busy[task], self._where[task] = future, leaders
                    assigned.append((task, leaders[0], fn, args))
        for task, leader, fn, args in assigned:
            if leader == 0:
                self._local.submit(_outcome, fn, args).add_done_callback(
                    lambda done, task=task: self._finish(task, done.result()))
            else:
                self._sends.append(self.comm.isend((task, fn, args), dest=leader, tag=self.tag))
        return bool(assigned)

    def _finish(self, task: int, outcome: tuple) -> None:
        with self._lock:
            future = self._busy.pop(task)
            leader = self._where.pop(task)[0]
        self._wake.set()
        kind, value = outcome
        if kind == "ok":
            future.set_result(value)
        else:
            future.set_exception(RemoteTaskError(f"a task on rank {leader} failed:\n{value}"))

    def _progress(self) -> None:
        MPI = self.mpi
        status, backoff = MPI.Status(), Backoff()
        while not self._stopping.is_set():
            if self._dispatch():
                backoff.active()
            self._sends = [request for request in self._sends if not request.Test()]
            if self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=self.tag + 1, status=status):
                task, outcome = self.comm.recv(source=status.Get_source(), tag=self.tag + 1)
                self._finish(task, outcome)
                backoff.active()
            else:
                backoff.sleep(self._wake)

    def in_flight(self) -> int:
        with self._lock:
            return len(self._busy) + len(self._pending)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lock:
                while self._pending:
                    self._pending.popleft()[0].cancel()
        if wait:
            while self.in_flight():
                time.sleep(POLL_S)
        self._stopping.set()
        self._thread.join()
        self._local.shutdown(wait=wait, cancel_futures=cancel_futures)


def on_nodes(executor, span: int, fn, *args) -> Future:
    """Submit a measuring task: on one node's slot, or holding `span` whole nodes (its ranks
    across them; the executor passes their names)."""
    return executor.submit(fn, *args) if span == 1 else executor.submit_spanning(span, fn, *args)


def release(launch: Launch, code: int) -> None:
    """Tell every other rank to stop serving and exit with `code` (rank 0, at the end)."""
    if launch.comm is None:
        return
    requests = []
    for rank in range(1, launch.size):
        try:
            requests.append(launch.comm.isend(code, dest=rank, tag=TAG_STOP))
        except Exception:       # mpi4py's MPI.Exception: that rank has gone (the job's SIGTERM
            pass                # reached it first; OFI's TCP fails a send to it), nothing to tell
    deadline = time.monotonic() + 5.0
    while requests and time.monotonic() < deadline:
        requests = [request for request in requests if not _done(request)]
        time.sleep(POLL_S)


def _done(request) -> bool:
    """A send request completed, or failed (its peer has gone)."""
    try:
        return request.Test()
    except Exception:
        return True


def serve(launch: Launch) -> int:
    """A rank other than 0: run the tasks rank 0 sends (as many at once as it sends) until it says
    stop; its exit code."""
    MPI = launch.mpi
    comm, status, backoff = launch.comm, MPI.Status(), Backoff()
    running: dict = {}          # future -> (task id, result tag)
    sends: list = []
    threads = ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0)) + 1)
    try:
        while True:
            signals.check()
            for future in [f for f in running if f.done()]:
                task, tag = running.pop(future)
                sends.append(comm.isend((task, future.result()), dest=0, tag=tag))
                backoff.active()
            sends = [request for request in sends if not request.Test()]
            if not comm.Iprobe(source=0, tag=MPI.ANY_TAG, status=status):
                backoff.sleep()
                continue
            backoff.active()
            tag = status.Get_tag()
            message = comm.recv(source=0, tag=tag)
            if tag == TAG_STOP:
                for request in sends:
                    wait_for(request)
                return int(message)
            task, fn, args = message
            running[threads.submit(_outcome, fn, args)] = (task, tag + 1)
    finally:
        threads.shutdown(wait=False, cancel_futures=True)   # a stopped job does not wait for them
