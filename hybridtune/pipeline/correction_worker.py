"""`predict --corrected` on two cores: a second process that reads the store, rebuilds the model.

It works while the offline stage runs, then corrects its configurations.
"""

from __future__ import annotations

import multiprocessing

from hybridtune.pipeline.corrections import corrections_of, prepared_corrections


def _serve(connection, path: str, machine_sha256: str) -> None:
    """Prepare at once; on (configurations, store_changed) answer ('ok', (note, corrections)),
    or ('failed', None) for the caller to do it itself (and raise what it raises)."""
    try:
        prepared = prepared_corrections(path, machine_sha256)
    except Exception:       # the store may only get this machine file's rows from the run
        prepared = None
    try:
        configurations, store_changed = connection.recv()
    except EOFError:
        return
    try:
        if prepared is None or store_changed:
            prepared = prepared_corrections(path, machine_sha256)
        reply = ("ok", corrections_of(prepared, configurations))
    except Exception:
        reply = ("failed", None)
    connection.send(reply)
    connection.close()


class CorrectionWorker:
    """Started before the offline stage (so the process forks before the store is opened for
    writing); corrections() gets its answer, or computes here where there is no worker or it
    failed."""

    def __init__(self, path: str, machine_sha256: str):
        self._args = (path, machine_sha256)
        self._process = self._connection = None
        if "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")
            self._connection, child = context.Pipe()
            self._process = context.Process(target=_serve, args=(child, path, machine_sha256),
                                            daemon=True)
            self._process.start()
            child.close()

    def corrections(self, configurations: list, store_changed: bool) -> tuple[str, dict]:
        """(note, per configuration variant -> Corrected), as corrections_of gives them;
        store_changed: the run appended predictions the worker's snapshot lacks."""
        if self._process is not None:
            try:
                self._connection.send((list(configurations), store_changed))
                status, answer = self._connection.recv()
            except (EOFError, OSError):
                status = "failed"
            if status == "ok":
                return answer
        return corrections_of(prepared_corrections(*self._args), configurations)

    def close(self) -> None:
        if self._process is not None:
            self._connection.close()
            self._process.join(timeout=1)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
