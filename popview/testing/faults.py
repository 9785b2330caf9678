"""Faults for tests: builders that fail as a full disk does."""
from __future__ import annotations

import errno
import os


def full_disk_build(calls: list, note=lambda path: path):
    """A companion's builder (companion.Part.build's arguments: source, defs, path, progress)
    that fails with ENOSPC naming its file, as a full disk does; `note(path)` of each call is
    appended to `calls` (by default the path asked for)."""

    def build(source, defs, path, progress):
        calls.append(note(path))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    return build
