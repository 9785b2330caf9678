"""Where each location's rows lie in a spill file, and reading them back in order.

The writer spills every appended chunk ordered by location, so a location's
rows are a run in each chunk that holds some (the location column itself is
not spilled: the runs tell it). The run index lists those runs
by location then chunk: the rows of locations [a, b) in arrival order are the
concatenation of one slice of the index. Long runs are read with one pread per
run straight into the result (the kernel copies from the page cache: 2-3x
faster than faulting a memory map in page by page); short runs go through a
memory map whose pages are let go as the read goes. Either way only what a
read returns counts as memory.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from popview.cache.kept import KeptColumn
from popview.cache.narrow import SpillFile, mapped_batches
from popview.cache.order import concat_runs


def save_raw(path, array: np.ndarray) -> None:
    """The bytes of `array` into a new file at `path`; a write that fails (a full disk) is
    raised. numpy's tofile lost a small array without a word there: its buffered write failed
    only at the close, unchecked, and an empty run index then failed the conversion later
    with an IndexError."""
    with open(path, "wb") as f:
        f.write(memoryview(np.ascontiguousarray(array)).cast("B"))


class RunIndex:
    """Runs of rows per location in a spill (rows counted from the file's start), by
    location then chunk."""

    def __init__(self, loc: np.ndarray, start: np.ndarray, length: np.ndarray, n_loc: int):
        self.loc, self.start, self.length, self.n_loc = loc, start, length, n_loc
        self.loc_first_run = np.searchsorted(loc, np.arange(n_loc + 1)).astype(np.int64)

    @classmethod
    def from_chunks(cls, chunks: list[tuple[int, int, np.ndarray, np.ndarray]], n_loc: int) -> "RunIndex":
        """From the writer's chunks: (first row, rows, locations present, their first rows)."""
        if not chunks:
            return cls(*(np.zeros(0, np.int64),) * 3, n_loc)
        loc = np.concatenate([present for _, _, present, _ in chunks]).astype(np.int64)
        start = np.concatenate([first + rows for first, _, _, rows in chunks])
        length = np.concatenate([np.diff(np.append(rows, n)) for _, n, _, rows in chunks])
        order = np.argsort(loc, kind="stable")          # by location, chunks in arrival order
        return cls(loc[order], np.ascontiguousarray(start[order], np.int64),
                   np.ascontiguousarray(length[order], np.int64), n_loc)

    def save(self, path: Path) -> None:
        """As bare int64 (n_loc, runs, then the three columns): no `.npy` header to parse
        (see rawtables.py on why)."""
        head = np.array([self.n_loc, len(self.loc)], np.int64)
        save_raw(path, np.concatenate((head, self.loc, self.start, self.length)).astype("<i8"))

    @classmethod
    def load(cls, path: Path) -> "RunIndex":
        data = np.fromfile(path, "<i8").astype(np.int64, copy=False)
        n_loc, n = int(data[0]), int(data[1])
        loc, start, length = (data[2 + k * n:2 + (k + 1) * n] for k in range(3))
        return cls(loc, start, length, n_loc)

    def read(self, path: "Path | KeptColumn | SpillFile | None", dtype, a: int, b: int, skip: int = 0, take: int | None = None,
             copy: bool = True) -> np.ndarray:
        """The rows of locations [a, b) from the column file at `path` (only `take` of them
        after the first `skip`, when given); the location column itself (path None) is not
        spilled but told by the runs. `path` may be the column kept in memory (kept.py):
        without `copy`, rows in one run are its own slice then."""
        r0, r1 = int(self.loc_first_run[a]), int(self.loc_first_run[b])
        loc, start, length = self.loc[r0:r1], self.start[r0:r1], self.length[r0:r1]
        if skip or take is not None:
            loc, start, length = _clip_runs(loc, start, length, skip, take)
        return read_listed(path, dtype, loc, start, length, copy)


    def views(self, column: KeptColumn, a: int, b: int, skip: int = 0, take: int | None = None) -> list[np.ndarray]:
        """What read() gives from a column kept in memory, as its runs' own slices, in order."""
        r0, r1 = int(self.loc_first_run[a]), int(self.loc_first_run[b])
        loc, start, length = self.loc[r0:r1], self.start[r0:r1], self.length[r0:r1]
        if skip or take is not None:
            loc, start, length = _clip_runs(loc, start, length, skip, take)
        return column.views(start, length)


def read_listed(path: "Path | KeptColumn | SpillFile | None", dtype, loc: np.ndarray, start: np.ndarray,
                length: np.ndarray, copy: bool = True) -> np.ndarray:
    """The runs (loc, start, length) of the column file at `path` (or kept in memory, or a
    spill file with narrow chunks: narrow.py), one after another; the location column itself
    (path None) is not spilled but told by the runs."""
    if path is None:
        return np.repeat(loc.astype(dtype), length)     # repeated in the column's own type
    if isinstance(path, KeptColumn):
        return path.read(start, length, copy)
    if isinstance(path, SpillFile):
        return path.read(start, length).view(dtype)
    out = np.empty(int(length.sum()), dtype)
    if len(out):
        read_runs(path, start, length, out)
    return out


def _clip_runs(loc: np.ndarray, start: np.ndarray, length: np.ndarray, skip: int, take: int | None):
    """The runs cut to rows [skip, skip + take) of their concatenation."""
    ends = np.cumsum(length)
    begins = ends - length
    stop = int(ends[-1]) if take is None or not len(ends) else skip + take
    lo, hi = np.clip(begins, skip, stop), np.clip(ends, skip, stop)
    keep = hi > lo
    return loc[keep], (start + (lo - begins))[keep], (hi - lo)[keep]


# Rows copied between two releases of the mapped pages: a read adds at most this much
# to the process's resident memory besides what it returns.
BATCH_ROWS = 1 << 20

# Mean bytes per run from which runs are read with pread, one call per run (a
# Python loop over runs, so only where runs are long).
PREAD_MIN_RUN_BYTES = 1 << 16


def read_runs(path: Path, starts: np.ndarray, lengths: np.ndarray, out: np.ndarray) -> None:
    """out = the runs [start, start + length) of the file at `path` (items of out's type), one
    after another."""
    if out.nbytes >= PREAD_MIN_RUN_BYTES * len(starts):
        _pread_runs(path, starts, lengths, out)
        return
    src, batches = mapped_batches(path, out.dtype, lengths, BATCH_ROWS)
    for r0, r1, first, n in batches:
        concat_runs(src, starts[r0:r1], lengths[r0:r1], out[first:first + n])


def _pread_runs(path: Path, starts: np.ndarray, lengths: np.ndarray, out: np.ndarray) -> None:
    """out = the runs of `path` one after another, each read into its place in `out`."""
    size = out.dtype.itemsize
    dst = memoryview(out.reshape(-1).view(np.uint8))
    fd = os.open(path, os.O_RDONLY)
    try:
        pos = 0
        for start, length in zip(starts.tolist(), lengths.tolist()):
            view, offset = dst[pos:pos + length * size], start * size
            while len(view):
                got = os.preadv(fd, [view], offset)
                if got <= 0:
                    raise EOFError(f"{path}: {len(view)} bytes missing at offset {offset}")
                view, offset = view[got:], offset + got
            pos += length * size
    finally:
        os.close(fd)
