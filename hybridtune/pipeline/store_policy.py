"""Which store a command may write, opened with its run record; a store only read by dry runs.

The shipped ground truth (data/groundtruth/) is written by its own campaign script alone."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from hybridtune.compiler.build import FLAGS, compiler
from hybridtune.describe.library import PROJECT_ROOT, default_store
from hybridtune.errors import HybridtuneError, RequestError
from hybridtune.store import Store

GROUND_TRUTH_CAMPAIGN = "HYBRIDTUNE_GROUND_TRUTH_CAMPAIGN"    # set by jobs/groundtruth.sh alone


def writable(path: str | None) -> Path:
    """A store this command may write: any but the shipped ground truth's (data/groundtruth/),
    which only its own campaign script writes."""
    target = Path(path) if path else default_store()
    shipped = (PROJECT_ROOT / "data" / "groundtruth").resolve()
    if shipped in target.resolve().parents and not os.environ.get(GROUND_TRUTH_CAMPAIGN):
        raise RequestError(f"--db {path}: expected a store outside {shipped}, which only "
                           "jobs/groundtruth.sh writes; copy the file to write into it, or give "
                           "it as --prior to use its model (read-only)")
    return target


def open_store(path: str | None, scenario, command: str, extra: dict | None = None):
    """The store in append mode with this command's run record (every command that writes one)."""
    target = writable(path)
    if not target.parent.is_dir():
        if path:
            raise HybridtuneError(f"--db {path}: expected an existing folder {target.parent}")
        target.parent.mkdir(parents=True, exist_ok=True)
    machine = scenario.machine if scenario is not None else None
    run = {"command": command, "argv": sys.argv[1:],
           "machine_file": machine.path if machine else "",
           "machine_sha256": machine.sha256 if machine else "",
           "compiler": compiler(), "compiler_flags": " ".join(FLAGS), "extra": extra or {}}
    return Store.open(target, "a", run=run)


def store_path(path: str | None) -> str:
    """The store a command names, or the default one."""
    return str(path or default_store())


@contextlib.contextmanager
def read_only_store(path: str):
    """The store at path opened read-only, or None where there is none yet (dry runs)."""
    store = Store.open(path, "r") if os.path.exists(path) else None
    try:
        yield store
    finally:
        if store is not None:
            store.close()
