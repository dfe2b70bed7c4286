"""Executors that run the pipeline's tasks: in this process, or one task at a time per node of an MPI job.

Rank 0 schedules: tasks wait in submission order and go to the first free node; the node of rank 0
runs its task in a thread of rank 0, every other node's first rank runs `serve`. No rank blocks in
an MPI call: messages are probed and requests tested between sleeps of POLL_S, so a waiting rank
uses about 1% of a core, and signal handlers run within POLL_S.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor

from hybridtune.errors import HybridtuneError
from hybridtune.face.launch import POLL_S, Backoff, Launch, wait_for

TAG_TASK, TAG_RESULT, TAG_STOP = 21, 22, 23


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


def _outcome(fn, args) -> tuple:
    try:
        return "ok", fn(*args)
    except Exception:
        return "error", traceback.format_exc(limit=8)


class NodeExecutor(Executor):
    """Rank 0's executor over the job's nodes: at most one task in flight per node."""

    def __init__(self, launch: Launch):
        self.comm = launch.comm
        self.leaders = [node.ranks[0] for node in launch.nodes]
        self.capacity = len(self.leaders)
        self._pending: deque = deque()
        self._busy: dict[int, Future] = {}       # leader rank -> its task's future
        self._local = ThreadPoolExecutor(max_workers=1, thread_name_prefix="node0")
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()          # a task submitted or finished here
        self._sends: list = []
        self._thread = threading.Thread(target=self._progress, name="scheduler", daemon=True)
        self._thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if kwargs:
            raise TypeError("NodeExecutor tasks take positional arguments only")
        future: Future = Future()
        with self._lock:
            self._pending.append((future, fn, args))
        self._wake.set()
        return future

    def _dispatch(self) -> bool:
        """Send waiting tasks to free nodes; whether any was sent."""
        assigned = []
        with self._lock:
            for leader in self.leaders:
                if not self._pending:
                    break
                if leader in self._busy:
                    continue
                future, fn, args = self._pending.popleft()
                if future.set_running_or_notify_cancel():
                    self._busy[leader] = future
                    assigned.append((leader, fn, args))
        for leader, fn, args in assigned:
            if leader == 0:
                self._local.submit(_outcome, fn, args).add_done_callback(
                    lambda done: self._finish(0, done.result()))
            else:
                self._sends.append(self.comm.isend((fn, args), dest=leader, tag=TAG_TASK))
        return bool(assigned)

    def _finish(self, leader: int, outcome: tuple) -> None:
        with self._lock:
            future = self._busy.pop(leader)
        self._wake.set()
        kind, value = outcome
        if kind == "ok":
            future.set_result(value)
        else:
            future.set_exception(RemoteTaskError(f"a task on rank {leader} failed:\n{value}"))

    def _progress(self) -> None:
        from mpi4py import MPI
        status, backoff = MPI.Status(), Backoff()
        while not self._stopping.is_set():
            if self._dispatch():
                backoff.active()
            self._sends = [request for request in self._sends if not request.Test()]
            if self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG_RESULT, status=status):
                source = status.Get_source()
                self._finish(source, self.comm.recv(source=source, tag=TAG_RESULT))
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


def release(launch: Launch, code: int) -> None:
    """Tell every other rank to stop serving and exit with `code` (rank 0, at the end)."""
    if launch.comm is None:
        return
    requests = [launch.comm.isend(code, dest=rank, tag=TAG_STOP) for rank in range(1, launch.size)]
    deadline = time.monotonic() + 5.0
    while requests and time.monotonic() < deadline:
        requests = [request for request in requests if not request.Test()]
        time.sleep(POLL_S)


def serve(launch: Launch) -> int:
    """A rank other than 0: run the tasks rank 0 sends until it says stop; its exit code."""
    from mpi4py import MPI
    comm, status, backoff = launch.comm, MPI.Status(), Backoff()
    while True:
        if not comm.Iprobe(source=0, tag=MPI.ANY_TAG, status=status):
            backoff.sleep()
            continue
        backoff.active()
        tag = status.Get_tag()
        message = comm.recv(source=0, tag=tag)
        if tag == TAG_STOP:
            return int(message)
        fn, args = message
        wait_for(comm.isend(_outcome(fn, args), dest=0, tag=TAG_RESULT))
