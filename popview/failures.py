"""One line for a failure the user must read: the CLI prints it, the window shows it.

Never a traceback: the line names the file where one is known and says what to
do. HDF5's errors from a cache damaged after it was opened and verified (a
chunk's checksum fails on read) become one sentence that says so.
"""
from __future__ import annotations

import errno
import traceback

# Hints for the errors users meet: the message names the file, this says what to do.
_OS_HINTS = {
    errno.ENOSPC: "no space left on the device (free some space, or write elsewhere: --cache-dir, -o)",
    errno.EDQUOT: "disk quota exceeded (free some space, or write elsewhere: --cache-dir, -o)",
    errno.EROFS: "read-only file system (write elsewhere: --cache-dir, -o)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "file name too long (shorten the trace's name or the --cache-dir path)",
    errno.ENOTDIR: "a part of this path is a file, not a directory",
    errno.EEXIST: "already exists and is not a directory",
    errno.ENOMEM: "out of memory",
}


def one_line(exc: BaseException) -> str:
    """What went wrong, in one line."""
    from popview.cache.errors import CacheError, CompanionFailed
    from popview.cache.progress import Cancelled
    from popview.analysis.cfg.reader import CfgError
    from popview.readers.errors import InputError

    # their message names the file and why (a Paraver view's said "unexpected CfgError: ...")
    if isinstance(exc, (InputError, CacheError, CompanionFailed, CfgError)):
        return _flat(exc)
    if isinstance(exc, Cancelled):
        return "cancelled"
    if isinstance(exc, ModuleNotFoundError):
        return missing_module(exc)
    if isinstance(exc, MemoryError):
        return "out of memory (the trace needs more memory than this machine has free)"
    if is_cache_read_failure(exc):
        return (f"a cache was damaged while in use (HDF5: {_flat(exc)}); "
                "popview converts it again when the trace is next opened")
    if isinstance(exc, OSError):
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        what = _OS_HINTS.get(exc.errno) or exc.strerror or str(exc)
        return f"{where}: {what}" if where else f"{what} ({exc})" if exc.errno in _OS_HINTS else what
    if isinstance(exc, RuntimeError):
        return _flat(exc)
    return f"unexpected {type(exc).__name__}: {_flat(exc)} (set POPVIEW_DEBUG=1 to see where)"


def missing_module(exc: ModuleNotFoundError) -> str:
    """A module popview needs is not installed: name it and say how to repair."""
    name = exc.name or _flat(exc)
    if name.split(".")[0] == "popview":
        return f"popview is installed incompletely: its module {name} is missing (reinstall popview)"
    return f"a package popview needs is not installed: {name} (reinstall popview with its dependencies)"


def is_cache_read_failure(exc: BaseException) -> bool:
    """An OSError raised inside h5py without an errno: HDF5 could not read what the
    cache holds (a chunk whose checksum fails, a damaged header)."""
    if not isinstance(exc, OSError) or exc.errno is not None:
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and "h5py" in frames[-1].filename


def _flat(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or "no details"
