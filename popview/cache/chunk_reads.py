"""Rows of a Zstd column read by whole chunks, decoded in threads.

h5py reads a filtered dataset one chunk after the other under its lock:
checksum, Zstd, then the byte shuffle undone, all on one core (a call-path
focus of a 10^8-record trace spent 0.7 s there). Here the stored chunks are
read as they are (`read_direct_chunk`, I/O only) and checked, decompressed
(zstandard releases the GIL) and unshuffled (nogil kernels) in the threads
that compress chunks when a cache is written (chunks._threads): twice as
fast on two cores. Anything this path does not know (another filter, a
chunk not stored, a checksum that does not match, threads that take no more
jobs once the main thread has ended) is read by h5py instead,
so a damaged chunk still fails as HDF5 reports it.
"""
from __future__ import annotations

import threading
from collections import deque

import h5py
import numpy as np
import zstandard

from popview import jit
from popview.cache import chunks
from popview.cache.integrity import fletcher32

MIN_CHUNKS = 3            # fewer chunks than this: h5py's own read costs no more
AHEAD = 64                # chunks read ahead of their decoding, at most
_local = threading.local()


class _Unknown(Exception):
    """A chunk this path does not decode: h5py reads the rows instead."""


def read_rows(dset: h5py.Dataset, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """dset[lo:hi] of a one-dimensional column, its chunks decoded in threads."""
    hi = dset.shape[0] if hi is None else min(hi, dset.shape[0])
    lo = max(0, lo)
    if hi <= lo:
        return np.zeros(0, dset.dtype)
    plan = _plan(dset, lo, hi) if not chunks.in_worker() else None    # no sub-jobs from a job of the pool
    if plan is None:
        return dset[lo:hi]
    try:
        return _decoded(dset, lo, hi, *plan)
    except _Unknown:
        return dset[lo:hi]


def read_ranges(dset: h5py.Dataset, ranges: list[tuple[int, int]]) -> np.ndarray:
    """The rows of [lo, hi) ranges of a one-dimensional column, concatenated: the chunks of
    them all decoded in threads together (many short ranges cost their chunks, not a read
    each); the rows as h5py reads them where this path does not know the chunks."""
    ranges = [(max(0, lo), min(hi, dset.shape[0])) for lo, hi in ranges]
    ranges = [(lo, hi) for lo, hi in ranges if hi > lo]
    plan = _plan(dset, 0, dset.shape[0]) if ranges and not chunks.in_worker() else None
    if plan is None:
        return np.concatenate([dset[lo:hi] for lo, hi in ranges] + [np.zeros(0, dset.dtype)])
    rows = plan[0]
    out = np.empty(sum(hi - lo for lo, hi in ranges), dset.dtype)

    def pieces():
        pos = 0
        for lo, hi in ranges:
            for first in range(lo // rows * rows, hi, rows):
                yield out[pos:pos + hi - lo], lo, hi, first
            pos += hi - lo

    try:
        _decode_all(dset, pieces(), *plan)
    except _Unknown:
        return np.concatenate([dset[lo:hi] for lo, hi in ranges])
    return out


def _plan(dset: h5py.Dataset, lo: int, hi: int):
    """(chunk rows, shuffle, checksum) when the rows span enough chunks of a known pipeline."""
    if dset.ndim != 1 or dset.chunks is None or dset.dtype.itemsize not in (1, 2, 4, 8):
        return None
    rows = dset.chunks[0]
    if (hi - 1) // rows - lo // rows + 1 < MIN_CHUNKS:
        return None
    try:
        shuffle, _, checksum = chunks.pipeline(dset)
    except ValueError:
        return None
    return rows, shuffle, checksum


def _decoded(dset, lo: int, hi: int, rows: int, shuffle: bool, checksum: bool) -> np.ndarray:
    out = np.empty(hi - lo, dset.dtype)
    _decode_all(dset, ((out, lo, hi, first) for first in range(lo // rows * rows, hi, rows)), rows, shuffle,
                checksum)
    return out


def _decode_all(dset, pieces, rows: int, shuffle: bool, checksum: bool) -> None:
    """Each of `pieces` (out, lo, hi, first: rows [lo, hi) of the chunk starting at row `first`
    into `out`, which holds rows lo..hi) decoded in the pool's threads; at most AHEAD chunks
    read and not yet decoded at once (all read first held the column's compressed bytes
    beside it). Returns once no thread writes into any `out`."""
    pending: deque = deque()
    try:
        for out, lo, hi, first in pieces:
            while len(pending) >= AHEAD:
                pending[0].result()      # left in `pending` until it is done: waited for below
                pending.popleft()
            stored = _stored(dset, first)
            try:
                job = chunks._threads().submit(jit.carry(_decode_into), out, lo, hi, first, rows, stored,
                                               shuffle, checksum)
            except RuntimeError as exc:  # no more jobs taken: the main thread has ended (or the pool shut)
                raise _Unknown from exc
            pending.append(job)
        while pending:
            pending[0].result()
            pending.popleft()
    finally:
        for job in pending:
            job.cancel()
        for job in pending:
            if not job.cancelled():
                job.exception()          # wait: no thread may write into `out` after we return


def _stored(dset, first: int) -> bytes:
    try:
        mask, stored = dset.id.read_direct_chunk((first,))
    except (KeyError, OSError, ValueError, RuntimeError) as exc:    # not stored (fill value), unreadable
        raise _Unknown from exc
    if mask:
        raise _Unknown                                 # a filter skipped on this chunk
    return stored


def _decode_into(out, lo: int, hi: int, first: int, rows: int, stored: bytes, shuffle: bool,
                 checksum: bool) -> None:
    body = memoryview(stored)
    if checksum:
        body, tail = body[:-4], bytes(body[-4:])
        if int(fletcher32(np.frombuffer(body, np.uint8))) != int.from_bytes(tail, "little"):
            raise _Unknown
    size = out.dtype.itemsize
    try:
        raw = _decompressor().decompress(body, max_output_size=rows * size)
    except zstandard.ZstdError as exc:
        raise _Unknown from exc
    data = np.frombuffer(raw, np.uint8)
    if len(data) != rows * size:
        raise _Unknown
    a, b = max(lo, first) - first, min(hi, first + rows) - first      # the wanted rows of the chunk
    dest = out[first + a - lo:first + b - lo].view(np.uint8)
    if not shuffle or size == 1:
        dest[:] = data[a * size:b * size]
    elif a == 0 and b == rows:
        _unshuffle(data, dest, size)
    else:
        whole = _scratch(rows * size)
        _unshuffle(data, whole, size)
        dest[:] = whole[a * size:b * size]


def _unshuffle(data, dest, size: int) -> None:
    if size == 8:
        _unshuffle8(data, dest)
    elif size == 4:
        _unshuffle4(data, dest)
    else:
        dest[:] = data.reshape(size, -1).T.reshape(-1)


def _decompressor() -> zstandard.ZstdDecompressor:
    d = getattr(_local, "zstd", None)
    if d is None:
        d = _local.zstd = zstandard.ZstdDecompressor()
    return d


def _scratch(nbytes: int) -> np.ndarray:
    buf = getattr(_local, "whole", None)
    if buf is None or len(buf) < nbytes:
        buf = _local.whole = np.empty(nbytes, np.uint8)
    return buf[:nbytes]


def _untransposed(data, dest, size: int) -> None:
    """The byte shuffle undone by numpy: interpreted runs (popview.jit) of the kernels."""
    dest[:] = data.reshape(size, -1).T.reshape(-1)


@jit.njit(cache=True, nogil=True, python=lambda data, dest: _untransposed(data, dest, 8))
def _unshuffle8(data, dest):
    """HDF5's byte shuffle of 8-byte items undone, unrolled as chunks._shuffle8."""
    n = len(data) // 8
    for i in range(n):
        j = i * 8
        dest[j] = data[i]
        dest[j + 1] = data[n + i]
        dest[j + 2] = data[2 * n + i]
        dest[j + 3] = data[3 * n + i]
        dest[j + 4] = data[4 * n + i]
        dest[j + 5] = data[5 * n + i]
        dest[j + 6] = data[6 * n + i]
        dest[j + 7] = data[7 * n + i]


@jit.njit(cache=True, nogil=True, python=lambda data, dest: _untransposed(data, dest, 4))
def _unshuffle4(data, dest):
    """The same for 4-byte items (kept apart from _unshuffle8 on purpose, as chunks._shuffle4 is)."""
    n = len(data) // 4
    for i in range(n):
        j = i * 4
        dest[j] = data[i]
        dest[j + 1] = data[n + i]
        dest[j + 2] = data[2 * n + i]
        dest[j + 3] = data[3 * n + i]
