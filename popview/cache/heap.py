"""glibc's allocator of the derived-data process (sidecar.py) and of `popview convert`'s
own process (commands/convert.py, but with the timeline overview), set once there.

A conversion allocates and frees arrays of tens of megabytes thousands of
times. By default glibc maps each one of 32 MB or more afresh (its dynamic
threshold) and trims its heap as soon as its top is free, so every new array
is faulted in page by page. The derived-data process does nothing but
convert and then exits, so there it serves large arrays from its heap and
keeps freed memory for the next ones, for good: fixed thresholds, which turn
glibc's dynamic threshold off in that process only. So does the command line's
conversion (CPU -4 to -8 % on the 1 GB trace, the kernel's clearing of fresh
pages; peak +40-60 MB), but not beside the derived-data process of a conversion
with the timeline overview, whose joint peak is the one near the 1 GB bound.

Never called in the process that uses popview as a library (a notebook, the
window and its Qt threads): the allocator of a caller's process is not
popview's to change. No-op where the C library is not glibc.

`release_free_memory` changes no setting: it hands the memory glibc holds free
back to the system (malloc_trim), between the steps of a conversion whose
peaks come at different moments. Arrays under glibc's mmap threshold (up to
32 MB) are served from its heaps, whose freed pages glibc keeps: after the
tables of the 1 GB trace are written the converting process holds about
180 MB of them, and the derived-data process what its previous job freed,
both while the cumulative sums bring the two processes to their joint peak.
"""
from __future__ import annotations

import ctypes
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
_CONVERTING = (1 << 30, (1 << 31) - 1)        # mmap threshold, trim threshold
OFF_ENV = "POPVIEW_DEFAULT_MALLOC"            # set to 1: leave glibc's defaults (to measure the gain)


def _glibc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def keep_freed_memory() -> None:
    """For a process that only converts (the derived-data process): set for good."""
    libc = _glibc()
    if libc is None or os.environ.get(OFF_ENV) == "1":
        return
    libc.mallopt(M_MMAP_THRESHOLD, _CONVERTING[0])
    libc.mallopt(M_TRIM_THRESHOLD, _CONVERTING[1])


def release_free_memory() -> None:
    """Give the memory the allocator holds free back to the system, now (any process:
    this sets nothing)."""
    libc = _glibc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)
