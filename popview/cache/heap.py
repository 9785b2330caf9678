"""glibc's allocator set for conversions.

A conversion allocates and frees arrays of tens of megabytes thousands of
times. glibc maps each one apart from 32 MB up (and trims its heap as soon
as its top is free), so every new array is faulted in page by page: on the
1 GB benchmark trace that was over 500,000 page faults and about 2 s of
kernel time a process. While a conversion runs, large arrays come from the
heap and freed memory stays there for the next ones; when the last one
ends, the usual limits are set back and the free memory handed back.
No-op where the C library is not glibc.
"""
from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
_CONVERTING = (1 << 30, (1 << 31) - 1)        # mmap threshold, trim threshold
_AFTERWARDS = (32 << 20, 64 << 20)
_lock = threading.Lock()
_active = 0


def _glibc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def keep_freed_memory() -> None:
    """For a process that only converts (the derived-data process): set for good."""
    libc = _glibc()
    if libc is not None:
        _set(libc, _CONVERTING)


@contextmanager
def converting():
    """Conversions may run in several threads at once: the first sets, the last resets."""
    global _active
    libc = _glibc()
    if libc is None:
        yield
        return
    with _lock:
        _active += 1
        if _active == 1:
            _set(libc, _CONVERTING)
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                _set(libc, _AFTERWARDS)
                libc.malloc_trim(0)


def _set(libc, thresholds: tuple[int, int]) -> None:
    libc.mallopt(M_MMAP_THRESHOLD, thresholds[0])
    libc.mallopt(M_TRIM_THRESHOLD, thresholds[1])
