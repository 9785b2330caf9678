"""popview.atomic: a file is put into place whole, with the umask's mode, or not at all."""
from __future__ import annotations

import os

import pytest

from popview import atomic


def test_write_text_replaces_whole_with_the_umask_mode(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    old = os.umask(0o027)
    try:
        atomic.write_text(target, "new")
    finally:
        os.umask(old)
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "session.popview"
    target.write_text("old")

    def refuse(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", refuse)
    with pytest.raises(OSError):
        atomic.write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.popview"]


def test_file_mode_follows_the_umask():
    old = os.umask(0o022)
    try:
        assert atomic.file_mode() == 0o644
    finally:
        os.umask(old)


def test_a_replaced_file_is_released_without_a_descriptor_left_open(tmp_path):
    """The replaced file's last descriptor is closed by a thread (its pages freed there)."""
    import threading

    target = tmp_path / "cache"
    atomic.write_text(target, "old " * 1000)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    atomic.write_text(target, "new")
    for thread in threading.enumerate():
        if thread.name == "popview-release":
            thread.join()
    assert target.read_text() == "new"
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before


def test_a_fifo_replaced_does_not_block(tmp_path):
    """The file replaced is opened to be released by a thread: a FIFO at the target (a
    report asked into a named pipe) blocked that opening until a writer came."""
    import threading

    target = tmp_path / "report"
    os.mkfifo(target)
    done = threading.Event()
    writer = threading.Thread(target=lambda: (atomic.write_text(target, "new"), done.set()), daemon=True)
    writer.start()
    try:
        assert done.wait(10), "writing over a FIFO blocked"
    finally:
        if not done.is_set():          # unblock the opening so that the thread ends
            os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
            writer.join(5)
    assert target.read_text() == "new"


def test_a_failed_replace_leaves_no_descriptor_open(tmp_path, monkeypatch):
    """The replaced file is opened before the rename (to be released by a thread): a rename
    that fails must close it (a long-running window would leak one descriptor a failure)."""
    target = tmp_path / "cache"
    atomic.write_text(target, "old")
    before = len(os.listdir("/proc/self/fd"))

    def refused(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(atomic.os, "replace", refused)
    with pytest.raises(OSError, match="cross-device"):
        atomic.write_text(target, "new")
    assert len(os.listdir("/proc/self/fd")) == before
    assert target.read_text() == "old"
