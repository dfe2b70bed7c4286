"""Files and folders written whole or not at all: through a temporary beside the target, renamed."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from hybridtune.errors import HybridtuneError


def current_umask() -> int:
    """The process's umask (read by setting it, then set back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: str, write) -> None:
    """Write through a temporary file in the target folder, so no half-written file remains;
    write(handle) writes bytes."""
    target = Path(path)
    if target.is_dir():
        raise HybridtuneError(f"{path}: expected a file path, found a directory")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise HybridtuneError(f"{path}: expected an existing folder {folder}")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(tmp, 0o666 & ~current_umask())     # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomically(path: str, text: str) -> None:
    """write_atomically of a text, UTF-8 encoded."""
    write_atomically(path, lambda handle: handle.write(text.encode()))


def replace_folder(folder: Path, fill) -> None:
    """Fill a staging folder beside `folder` (fill(staging)), then put it in folder's place: a
    previous folder is replaced only once the new one is whole."""
    folder = Path(os.path.abspath(folder))        # "." and ".." resolved: the name is real
    parent = folder.parent
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=parent))
    old = parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.old"
    try:
        fill(staging)
        os.chmod(staging, 0o777 & ~current_umask())
        if folder.exists():
            folder.rename(old)
        staging.rename(folder)
    except BaseException:
        if old.exists() and not folder.exists():
            old.rename(folder)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
