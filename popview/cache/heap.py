"""glibc's allocator of the derived-data process (sidecar.py) and of `popview convert`'s
own process (commands/convert.py; for OTF2 only its one heap, `one_heap`), set once there.

A conversion allocates and frees arrays of tens of megabytes thousands of
times. By default glibc maps each one of 32 MB or more afresh (its dynamic
threshold) and trims its heap as soon as its top is free, so every new array
is faulted in page by page. The derived-data process does nothing but
convert and then exits, so there it serves large arrays from its heap and
keeps freed memory for the next ones, for good: fixed thresholds, which turn
glibc's dynamic threshold off in that process only. So does the command line's
conversion (CPU -4 to -8 % on the 1 GB trace, the kernel's clearing of fresh
pages; peak +40-60 MB); beside the derived-data process of a conversion with the
timeline overview since it serves every thread from one heap (below): the 1 GB
trace's two processes then peaked at 776-790 MB against 774-776 MB with the one
heap alone, CPU -5 %.

Both also serve every thread from glibc's one main heap (M_ARENA_MAX 1). A thread
otherwise gets a heap of its own, made of 64 MB pieces that glibc unmaps as soon as
one is wholly free, whatever the trim threshold, and maps afresh for the next array:
the 1 GB trace's parse, read and sums threads mapped 233 of them, and the conversion
took 245-290 thousand page faults (1.1 GB of fresh pages, faulted in and cleared by
the kernel; on this project's virtual machine a page the host took back costs 2-3
times more). From one heap: 93-110 thousand, system time 2.5-3.7 -> 1.7-2.1 s, peak
-30 MB. The threads allocate a few large arrays a block or group, so one heap's lock
costs nothing measurable. The command line's default conversion, whose peaks all come in
its own process, keeps what it freed between its steps too (`keep_freed_memory(trim=False)`:
release_free_memory then does nothing): the sums reuse what the sort freed instead of
faulting it in again (faults -15 %, peak -15 MB).

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

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
_CONVERTING = (1 << 30, (1 << 31) - 1)        # mmap threshold, trim threshold
OFF_ENV = "POPVIEW_DEFAULT_MALLOC"            # set to 1: leave glibc's defaults (to measure the gain)
_trim = [True]                                # release_free_memory trims (keep_freed_memory(trim=False): not)


def _glibc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def keep_freed_memory(trim: bool = True) -> None:
    """For a process that only converts (the derived-data process, the command line's
    conversion): set for good. `trim` False: release_free_memory does nothing from now on
    (a process whose peaks all come in it keeps what one step freed for the next)."""
    libc = _glibc()
    if libc is None or os.environ.get(OFF_ENV) == "1":
        return
    libc.mallopt(M_MMAP_THRESHOLD, _CONVERTING[0])
    libc.mallopt(M_TRIM_THRESHOLD, _CONVERTING[1])
    libc.mallopt(M_ARENA_MAX, 1)
    _trim[0] = trim


def one_heap() -> None:
    """Every thread's arrays from glibc's main heap (M_ARENA_MAX 1), nothing else set: for the
    command line's conversions that keep glibc's trimming (with the timeline's derived-data
    process, OTF2). Thread heaps unmapped when free and mapped afresh raised their peaks too."""
    libc = _glibc()
    if libc is None or os.environ.get(OFF_ENV) == "1":
        return
    libc.mallopt(M_ARENA_MAX, 1)


def release_free_memory() -> None:
    """Give the memory the allocator holds free back to the system, now (any process:
    this sets nothing)."""
    libc = _glibc()
    if libc is not None and _trim[0] and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)
