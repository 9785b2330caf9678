"""Which paths a reader may open: regular files only.

A size from `stat` means nothing for a device, a pipe or a socket (a link
to /dev/zero reads until memory runs out, a named pipe blocks forever), so
every file popview reads is checked here first, links followed.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from popview.readers.errors import InputError

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular_file(path, what: str = "file") -> os.stat_result:
    """stat of `path` (links followed) if it is a regular file, else InputError naming it."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: is {kind_of(st.st_mode)}, not a regular file: popview reads regular files only")
    return st


def is_regular(path) -> bool:
    """Whether `path` exists and is a regular file (links followed), without raising."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


# A compressed input expands at most MAX_EXPANSION times its size (text traces: about
# 10, Cube archives less): more is a compression bomb (deflate allows about 1000).
MAX_EXPANSION, MIN_EXPANSION_LIMIT = 200, 256 << 20


def expansion_limit(compressed_size: int) -> int:
    """Bytes a compressed input of `compressed_size` bytes may expand to."""
    return max(MIN_EXPANSION_LIMIT, MAX_EXPANSION * compressed_size)


def check_size(path, size: int, limit: int, what: str) -> None:
    if size > limit:
        raise InputError(f"{path}: {size:,} bytes is too big for {what} (limit {limit:,})")
