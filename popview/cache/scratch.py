"""The scratch folder of a conversion and the lock of a cache.

Every scratch file of a conversion (the spilled tables, their sorted copy, the
cache being written, the derived-data side files, the timeline's tiles) lives
in one folder beside the cache, `.popview-scratch-<pid>-<random>`, holding a
`lock` file its conversion keeps locked (fcntl.flock) while it runs. The
kernel lets go of the lock when the process ends, however it ends (kill -9
included), so the next conversion into that cache directory removes every
scratch folder whose lock it can take.

A cache is converted under `.<cache name>.lock` in the same folder, so that
two processes converting one trace at once do the work once: the second waits
and then finds the cache made.
"""
from __future__ import annotations

import errno
import fcntl
import os
import secrets
import shutil
import time
from pathlib import Path

PREFIX = ".popview-scratch-"
LOCK_NAME = "lock"
# A scratch folder younger than this whose lock file is missing is being created: left alone.
_GRACE_S = 60.0
_WAIT_POLL_S = 0.1


class Scratch:
    """One conversion's scratch folder in `directory`, removed by `remove()` (or by a later
    conversion when this process is gone)."""

    def __init__(self, directory: Path):
        directory = Path(directory)
        remove_stale(directory)
        self.path = directory / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        self.path.mkdir(mode=0o700)
        # locked before it gets its name: a `lock` that another process sees is held already
        self._lock_fd = os.open(self.path / (LOCK_NAME + ".new"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        os.rename(self.path / (LOCK_NAME + ".new"), self.path / LOCK_NAME)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def remove_stale(directory: Path) -> list[Path]:
    """Remove the scratch folders in `directory` whose conversion is no longer running."""
    removed = []
    try:
        entries = [p for p in Path(directory).iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return removed
    for folder in entries:
        if _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _abandoned(folder: Path) -> bool:
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        try:
            return time.time() - folder.stat().st_mtime > _GRACE_S
        except OSError:
            return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True                      # nobody holds it: its process is gone
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    finally:
        os.close(fd)


def remove_stale_lock(path: Path) -> None:
    """Remove the cache lock file at `path` when nobody holds it: a conversion killed after
    its cache was in place, but before it let go of the lock, leaves it behind."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if _same_file(fd, Path(path)):
            os.unlink(path)
    except OSError:
        pass                              # held (a conversion runs) or already gone
    finally:
        os.close(fd)


class CacheLock:
    """Exclusive lock on converting one cache (`.<name>.lock` beside it): taken
    waiting, with `waiting()` called (for progress and cancel) while another
    process holds it; `contended` tells whether someone else held it first."""

    def __init__(self, cache: Path, lock_name: str):
        self.path = Path(cache).parent / lock_name
        self.contended = False
        self._fd: int | None = None

    def acquire(self, waiting=None) -> None:
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError as exc:
                        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                            raise
                        self.contended = True
                        if waiting is not None:
                            waiting()
                        time.sleep(_WAIT_POLL_S)
                # the holder before us may have removed the file: lock the one at the path
                if _same_file(fd, self.path):
                    self._fd = fd
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.unlink(self.path)          # removed while held: nobody waits on a stale name
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
