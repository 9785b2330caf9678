"""Columns written in order, their chunks compressed in threads.

HDF5 compresses inside the library, one chunk after the other, under h5py's
lock: a conversion spent most of its table writing there while the other
core idled. Here each full chunk is put through the same filters the dataset
declares (byte shuffle, then Zstd: see writer.compression) by zstandard,
which releases the GIL, in a small thread pool, and stored with
write_direct_chunk. Readers see an ordinary Zstd-filtered dataset.
"""
from __future__ import annotations

import os
import threading
from collections import deque
from concurrent.futures import Future

import h5py
import numpy as np
import zstandard

from popview import jit
from popview.threads import Pool
from popview.cache.integrity import append_checksum, guard_of

ZSTD_FILTER = 32015          # the HDF5 filter id of Zstandard (hdf5plugin.Zstd)
_local = threading.local()
_pool: Pool | None = None
_pool_lock = threading.Lock()


def _threads() -> Pool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = Pool(max(2, min(4, os.cpu_count() or 2)), thread_name_prefix="popview-zstd",
                         initializer=_mark_worker)
        return _pool


def _mark_worker() -> None:
    _local.worker = True


def in_worker() -> bool:
    """Whether this thread is one of _threads(): a job there must not wait for jobs of its pool
    (every thread waiting so, none is left to run them)."""
    return getattr(_local, "worker", False)


def _transposed(raw, out, size: int) -> None:
    """byte shuffle by numpy: interpreted runs (popview.jit) of _shuffle8 and _shuffle4."""
    n = len(raw) // size
    out[:n * size] = raw[:n * size].reshape(-1, size).T.reshape(-1)


@jit.njit(cache=True, nogil=True, python=lambda raw, out: _transposed(raw, out, 8))
def _shuffle8(raw, out):
    """HDF5's byte shuffle of 8-byte items, unrolled (five times numpy's transpose):
    the times and values, most of the bytes a conversion compresses."""
    n = len(raw) // 8
    for i in range(n):
        j = i * 8
        out[i] = raw[j]
        out[n + i] = raw[j + 1]
        out[2 * n + i] = raw[j + 2]
        out[3 * n + i] = raw[j + 3]
        out[4 * n + i] = raw[j + 4]
        out[5 * n + i] = raw[j + 5]
        out[6 * n + i] = raw[j + 6]
        out[7 * n + i] = raw[j + 7]


@jit.njit(cache=True, nogil=True, python=lambda raw, out: _transposed(raw, out, 4))
def _shuffle4(raw, out):
    """The same for 4-byte items (event types, locations, states, call paths): numpy's
    transpose of them cost as much as the 8-byte kernel on twice the bytes. Kept apart
    from _shuffle8 on purpose: one kernel looping over the item size measured 12-25x
    slower than these unrolled two."""
    n = len(raw) // 4
    for i in range(n):
        j = i * 4
        out[i] = raw[j]
        out[n + i] = raw[j + 1]
        out[2 * n + i] = raw[j + 2]
        out[3 * n + i] = raw[j + 3]


def byte_shuffle(block: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The bytes of `block` grouped by their position in each item (HDF5's shuffle filter),
    into `out` (uint8, at least as long as the block's bytes) when given."""
    raw = np.ascontiguousarray(block).view(np.uint8).reshape(-1)
    size = block.dtype.itemsize
    if size == 1:
        return raw                       # one byte an item: nothing moves
    out = np.empty_like(raw) if out is None else out[:len(raw)]
    if size in (4, 8):
        (_shuffle8 if size == 8 else _shuffle4)(raw, out)
    else:
        out[:] = raw.reshape(-1, size).T.reshape(-1)
    return out


def _scratch(nbytes: int) -> np.ndarray:
    """This thread's buffer for shuffled chunks: a fresh array for every chunk cost more in
    page faults (glibc maps arrays of this size afresh) than the shuffle itself."""
    buf = getattr(_local, "shuffled", None)
    if buf is None or len(buf) < nbytes:
        buf = _local.shuffled = np.empty(nbytes, np.uint8)
    return buf


def _encode(block: np.ndarray, shuffle: bool, level: int, checksum: bool = False) -> bytes:
    """One chunk as the filter pipeline stores it: shuffled bytes, one Zstd frame, its
    Fletcher32 checksum."""
    raw = byte_shuffle(block, _scratch(block.nbytes)) if shuffle else block.view(np.uint8).reshape(-1)
    compressors = getattr(_local, "compressors", None)
    if compressors is None:
        compressors = _local.compressors = {}
    if level not in compressors:
        compressors[level] = zstandard.ZstdCompressor(level=level)
    frame = compressors[level].compress(raw)
    return append_checksum(frame) if checksum else frame


def pipeline(dset: h5py.Dataset) -> tuple[bool, int, bool]:
    """(shuffle, Zstd level, Fletcher32) of a dataset made by writer.create_column or
    with hdf5plugin.Zstd; ValueError for any other filter pipeline."""
    plist = dset.id.get_create_plist()
    shuffle, level, checksum = False, None, False
    for i in range(plist.get_nfilters()):
        code, _, values, _ = plist.get_filter(i)
        if checksum:
            raise ValueError(f"{dset.name}: a filter after the checksum is not written by chunks")
        if code == h5py.h5z.FILTER_SHUFFLE and level is None:
            shuffle = True
        elif code == ZSTD_FILTER and level is None:
            level = int(np.uint32(values[0]).view(np.int32)) if len(values) else 3   # fast levels are < 0
        elif code == h5py.h5z.FILTER_FLETCHER32 and level is not None:
            checksum = True
        else:
            raise ValueError(f"{dset.name}: filter {code} is not written by chunks")
    if level is None:
        raise ValueError(f"{dset.name}: not Zstd-compressed")
    return shuffle, level, checksum


class ChunkedWriter:
    """Appends rows to a pre-sized chunked dataset from its first row on (or rows
    [start, stop): start on a chunk's first row); close() writes the last, partial
    chunk (padded, as HDF5 stores edge chunks)."""

    AHEAD = 8     # chunks being compressed at once, per column

    def __init__(self, dset: h5py.Dataset, start: int = 0, stop: int | None = None):
        self.dset = dset
        self.shuffle, self.level, self.checksum = pipeline(dset)
        self.rows = dset.chunks[0]
        self.shape = dset.shape
        if start % self.rows:
            raise ValueError(f"{dset.name}: row {start} does not begin a chunk")
        self.stop = self.shape[0] if stop is None else stop
        self.start = start
        if dset.chunks[1:] != dset.shape[1:]:
            raise ValueError(f"{dset.name}: a chunk must span whole rows")
        self.dtype = dset.dtype       # h5py's property costs a call into HDF5 each time
        self._pending: deque[tuple[int, Future]] = deque()
        self._partial = np.empty((self.rows,) + self.shape[1:], self.dtype)
        self._held = 0        # rows in _partial
        self._next = start    # first row of the next chunk submitted
        self._written = 0
        self._guard = guard_of(dset)   # its file's writes: a failed one (a full disk) is raised after its chunk

    def write(self, rows: np.ndarray) -> None:
        if rows.dtype != self.dtype:
            rows = rows.astype(self.dtype)
        self._written += len(rows)
        if self._written > self.stop - self.start:
            raise ValueError(f"{self.dset.name}: more rows than its {self.stop - self.start}")
        i = 0
        if self._held:
            i = min(len(rows), self.rows - self._held)
            self._partial[self._held:self._held + i] = rows[:i]
            self._held += i
            if self._held == self.rows:
                self._submit(self._partial.copy())
                self._held = 0
        rows = np.ascontiguousarray(rows)
        while len(rows) - i >= self.rows:
            # a view, not a copy (copying cost 3 GB of memory traffic a gigabyte of trace): it keeps
            # `rows` alive only until its chunks are compressed, at most AHEAD of them
            self._submit(rows[i:i + self.rows])
            i += self.rows
        rest = len(rows) - i
        if rest:
            self._partial[:rest] = rows[i:]
            self._held = rest

    def close(self) -> None:
        if self._held:
            self._partial[self._held:] = 0
            self._submit(self._partial.copy())
            self._held = 0
        while self._pending:
            self._store_oldest()
        if self._written < self.stop - self.start:
            raise ValueError(f"{self.dset.name}: {self.stop - self.start - self._written} rows never written")

    def _submit(self, block: np.ndarray) -> None:
        self._pending.append((self._next, _threads().submit(jit.carry(_encode), block, self.shuffle, self.level, self.checksum)))
        self._next += self.rows
        while len(self._pending) > self.AHEAD:
            self._store_oldest()

    def _store_oldest(self) -> None:
        first, job = self._pending.popleft()
        offset = (first,) + (0,) * (len(self.shape) - 1)
        self.dset.id.write_direct_chunk(offset, job.result())
        if self._guard is not None:
            self._guard.check()


class WindowWriter:
    """Rows [lo, hi) of a pre-sized chunked dataset, appended in order: the rows before the
    first chunk boundary through HDF5 (the chunk is shared with the rows before lo), the
    rest by ChunkedWriter. What a task of a distributed finish writes of a table into a
    file of its own, which the driver joins (copy_rows)."""

    def __init__(self, dset: h5py.Dataset, lo: int, hi: int):
        self.dset, self.lo, self.hi = dset, lo, hi
        c = dset.chunks[0]
        self.head = min(hi, -(-lo // c) * c)
        self.pos = lo
        self._head = np.empty((self.head - lo,) + dset.shape[1:], dset.dtype)
        self._sink = ChunkedWriter(dset, start=self.head, stop=hi) if hi > self.head else None

    def write(self, rows: np.ndarray) -> None:
        if self.pos < self.head:
            k = min(len(rows), self.head - self.pos)
            self._head[self.pos - self.lo:self.pos - self.lo + k] = rows[:k]
            rows = rows[k:]
            self.pos += k
            if self.pos == self.head and self.head > self.lo:
                self.dset[self.lo:self.head] = self._head
        if len(rows):
            self._sink.write(rows)
            self.pos += len(rows)

    def close(self) -> None:
        if self.pos != self.hi:
            raise ValueError(f"{self.dset.name}: {self.hi - self.pos} rows of [{self.lo}, {self.hi}) never written")
        if self._sink is not None:
            self._sink.close()


def write_window(dset: h5py.Dataset, lo: int, rows: np.ndarray) -> None:
    """Rows [lo, lo + len(rows)) of a chunked dataset sized for the whole table (WindowWriter)."""
    sink = WindowWriter(dset, lo, lo + len(rows))
    sink.write(rows)
    sink.close()


def copy_rows(src: h5py.Dataset, dst: h5py.Dataset, lo: int, hi: int) -> None:
    """Rows [lo, hi) (first axis) of `src` into `dst` (the same shape, chunks and filters):
    whole chunks copied as stored, without decompressing; the chunks only partly in
    [lo, hi) through HDF5."""
    c, n = dst.chunks[0], dst.shape[0]
    if hi <= lo:
        return
    across = _across(dst)
    for k in range(lo // c, (hi - 1) // c + 1):
        c0, c1 = k * c, min((k + 1) * c, n)
        if lo <= c0 and c1 <= hi:
            _copy_stored(src, dst, c0, across)
        else:
            a, b = max(lo, c0), min(hi, c1)
            dst[a:b] = src[a:b]


def join_rows(dst: h5py.Dataset, windows: list[tuple[h5py.Dataset, int, int]]) -> None:
    """`dst` from consecutive windows (source dataset, lo, hi) covering its rows (first
    axis): a chunk inside one window copied as stored; a chunk shared by several gathered
    from them and written once (not once a window: a chunk of 64 locations of a pyramid
    level, when every part holds one location, would be read and compressed again 64 times)."""
    c, n = dst.chunks[0], dst.shape[0]
    across = _across(dst)
    w = 0
    for c0 in range(0, n, c):
        c1 = min(c0 + c, n)
        while w < len(windows) and windows[w][2] <= c0:
            w += 1
        if w == len(windows):
            break
        src, lo, hi = windows[w]
        if lo <= c0 and c1 <= hi:
            _copy_stored(src, dst, c0, across)
            continue
        slab = None
        for src, lo, hi in windows[w:]:
            if lo >= c1:
                break
            a, b = max(lo, c0), min(hi, c1)
            if b > a:
                if slab is None:
                    slab = np.full((c1 - c0,) + dst.shape[1:], dst.fillvalue, dst.dtype)
                slab[a - c0:b - c0] = src[a:b]
        if slab is not None:
            dst[c0:c1] = slab


def _across(dst: h5py.Dataset) -> list[tuple[int, ...]]:
    """The offsets, past the first axis, of the chunks one row-chunk of `dst` spans."""
    if len(dst.shape) < 2:
        return [(0,) * (len(dst.shape) - 1)]
    return [(j,) + (0,) * (len(dst.shape) - 2) for j in range(0, max(dst.shape[1], 1), dst.chunks[1])]


def _copy_stored(src: h5py.Dataset, dst: h5py.Dataset, c0: int, across: list[tuple[int, ...]]) -> None:
    """The chunks of row-chunk `c0` (first axis) copied from `src` to `dst` as stored."""
    for rest in across:
        mask, raw = src.id.read_direct_chunk((c0,) + rest)
        dst.id.write_direct_chunk((c0,) + rest, raw, mask)
