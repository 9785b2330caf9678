"""Errors of the cache, typed so that the command line and the window can tell the
user in one line what happened (they are InputErrors: the message is that line)."""
from __future__ import annotations

from popview.readers.errors import InputError


class CacheError(InputError):
    """A cache file that cannot be used: incomplete, of another schema, unreadable."""


class CacheDamaged(CacheError):
    """A cache whose bytes do not match their checksums: never used, converted again."""


class CacheUnwritable(CacheError):
    """No cache can be written where it should go (read-only or full disk, a file where a
    folder should be, a folder of someone else): the message says where and why."""


class DerivedDataFailed(CacheError, RuntimeError):
    """The derived-data process failed or ended (killed, say) before its result."""


class CompanionFailed(OSError):
    """A companion of a cache (its timeline overview, its window sums: companion.py) could
    not be built: its build process ended without a result (killed, crashed), or could not
    write it (then `errno` says why: ENOSPC, ...). The run is there without it; the message
    names the file and what failed."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


class DerivedProcessEnded(DerivedDataFailed):
    """The derived-data process ended (killed, crashed) without reporting a result."""
