"""The one way popview puts a file into place: whole or not at all, durable, shared.

Write to a temporary file beside the target, fsync it, give it the mode the
umask asks for (mkstemp makes 0600, which would hide a cache or report from
colleagues), rename it over the target and fsync the directory, so that after
a crash or power cut the target is either the old file or the new one, never
a mix. Used by the cache writer, the report writer and the session store.
"""
from __future__ import annotations

import os
import stat
import tempfile
import threading
from pathlib import Path


def write_text(path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        put_in_place(Path(tmp), path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def put_in_place(tmp: Path, path: Path) -> None:
    """Make the finished file `tmp` (on the filesystem of `path`) durable and rename it to `path`."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, file_mode())
    old = _open_replaced(path)
    try:
        os.replace(tmp, path)
    except BaseException:
        if old is not None:
            os.close(old)
        raise
    if old is not None:
        _release(old)
    sync_dir(Path(path).parent)


def _open_replaced(path: Path) -> int | None:
    """A descriptor of the regular file `path` is about to replace, to be released by
    _release; None when there is none. Opened without blocking: a FIFO there would wait
    for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def _release(fd: int) -> None:
    """Close the last descriptor of a replaced file in a thread: the kernel then frees its
    cached pages there (0.1 s for a cache of 441 MB) instead of in os.replace."""
    threading.Thread(target=os.close, args=(fd,), name="popview-release", daemon=True).start()


def sync_dir(directory: Path) -> None:
    """fsync a directory so that a rename in it survives a crash (best effort: some
    filesystems cannot open or sync a directory)."""
    sync_path(directory)


def sync_path(path: Path) -> None:
    """fsync a file or directory, best effort (a failure is left to a later fsync to report)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_mode() -> int:
    """The mode of a new file under the process's umask (read from /proc: setting the
    umask to read it would race with other threads)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644
