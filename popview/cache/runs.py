"""Where each location's rows lie in a spill file, and reading them back in order.

The writer spills every appended chunk ordered by location, so a location's
rows are a run in each chunk that holds some (the location column itself is
not spilled: the runs tell it). The run index lists those runs
by location then chunk: the rows of locations [a, b) in arrival order are the
concatenation of one slice of the index. Reads go through a memory map that
released once the read is done, so only what a read returns counts as memory.
"""
from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np

from popview.cache.order import concat_runs


class RunIndex:
    """Runs of rows per location in a spill (rows counted from the file's start)."""

    def __init__(self, run_loc: np.ndarray, run_start: np.ndarray, run_len: np.ndarray, n_loc: int):
        order = np.argsort(run_loc, kind="stable")          # by location, chunks in arrival order
        self.start = np.ascontiguousarray(run_start[order], np.int64)
        self.length = np.ascontiguousarray(run_len[order], np.int64)
        self.loc = loc = np.ascontiguousarray(run_loc[order], np.int64)
        self.loc_first_run = np.searchsorted(loc, np.arange(n_loc + 1)).astype(np.int64)
        self.loc_rows = np.zeros(n_loc + 1, np.int64)
        np.cumsum(np.bincount(loc, weights=self.length, minlength=n_loc)[:n_loc].astype(np.int64),
                  out=self.loc_rows[1:])

    @classmethod
    def from_chunks(cls, chunks: list[tuple[int, int, np.ndarray, np.ndarray]], n_loc: int) -> "RunIndex":
        """From the writer's chunks: (first row, rows, locations present, their first rows)."""
        locs, starts, lengths = [], [], []
        for first, n, present, first_rows in chunks:
            locs.append(present)
            starts.append(first + first_rows)
            lengths.append(np.diff(np.append(first_rows, n)))
        if not locs:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), n_loc)
        return cls(np.concatenate(locs).astype(np.int64), np.concatenate(starts), np.concatenate(lengths), n_loc)

    def save(self, path: Path) -> None:
        np.savez(path, start=self.start, length=self.length, loc=self.loc, loc_first_run=self.loc_first_run,
                 loc_rows=self.loc_rows)

    @classmethod
    def load(cls, path: Path) -> "RunIndex":
        self = cls.__new__(cls)
        with np.load(path, allow_pickle=False) as z:
            self.start, self.length, self.loc = z["start"], z["length"], z["loc"]
            self.loc_first_run, self.loc_rows = z["loc_first_run"], z["loc_rows"]
        return self

    def read(self, path: Path | None, dtype, a: int, b: int) -> np.ndarray:
        """The rows of locations [a, b) from the column file at `path`; the location column
        itself (path None) is not spilled but told by the runs."""
        r0, r1 = int(self.loc_first_run[a]), int(self.loc_first_run[b])
        if path is None:
            return np.repeat(self.loc[r0:r1], self.length[r0:r1]).astype(dtype)
        out = np.empty(int(self.loc_rows[b] - self.loc_rows[a]), dtype)
        if len(out):
            _read_runs(path, self.start[r0:r1], self.length[r0:r1], out)
        return out


# Rows copied between two releases of the mapped pages: a read adds at most this much
# to the process's resident memory besides what it returns.
BATCH_ROWS = 1 << 20


def _read_runs(path: Path, starts: np.ndarray, lengths: np.ndarray, out: np.ndarray) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    # Unmapped when the last view goes (closing it by hand fails while any
    # reference to a view, such as one held by a compiler, survives).
    src = np.frombuffer(m, out.dtype)
    ends = np.cumsum(lengths)
    cuts = np.searchsorted(ends, np.arange(BATCH_ROWS, int(ends[-1]), BATCH_ROWS), side="right")
    first = 0
    for r0, r1 in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [len(starts)]))):
        if r1 > r0:
            n = int(ends[r1 - 1]) - first
            concat_runs(src, starts[r0:r1], lengths[r0:r1], out[first:first + n])
            m.madvise(mmap.MADV_DONTNEED)     # the pages stay cached; this process lets go of them
            first += n
