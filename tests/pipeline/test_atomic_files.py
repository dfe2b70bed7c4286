"""Files and folders written whole or not at all: a failure leaves the old content and no temporary."""

from __future__ import annotations

import stat

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.pipeline.atomic_files import (current_umask, replace_folder, write_atomically,
                                              write_text_atomically)


def test_a_file_is_replaced_whole_with_an_ordinary_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    write_text_atomically(str(target), "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~current_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def failing(handle):
        handle.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(str(target), failing)
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_folder_or_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(HybridtuneError, match="found a directory"):
        write_text_atomically(str(tmp_path), "x")
    with pytest.raises(HybridtuneError, match="expected an existing folder"):
        write_text_atomically(str(tmp_path / "missing" / "out.txt"), "x")


def test_a_folder_is_replaced_only_once_the_new_one_is_whole(tmp_path):
    folder = tmp_path / "report"
    replace_folder(folder, lambda staging: (staging / "a.txt").write_text("first"))
    assert (folder / "a.txt").read_text() == "first"

    def failing(staging):
        (staging / "a.txt").write_text("second")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_folder(folder, failing)
    assert (folder / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    replace_folder(folder, lambda staging: (staging / "b.txt").write_text("third"))
    assert sorted(p.name for p in folder.iterdir()) == ["b.txt"]
