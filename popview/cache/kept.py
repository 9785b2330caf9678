"""Staged rows kept in memory instead of spilled, while they fit a budget.

The writer stages every appended chunk in raw column files (writer._Staging),
read back to write the sorted tables and, for tables whose rows arrived in
order, by the derived builders. On the 10^7-event OTF2 archive that round
trip (0.35 GB of columns copied into the page cache by the spill's thread,
then copied back twice) was about 0.6 s of CPU, most of it the kernel's. A
reader that knows its rows arrive in order and fit (the OTF2 reader: its
locations come one after the other) asks the writer to keep them: the
chunks' arrays stay as they were appended (the caller gives them up, as it
does to the spill's thread), and the rows are read from them. Once the
budget would be passed, every staging writes what it kept into its files
and spills from then on, so memory stays bounded whatever the trace.
"""
from __future__ import annotations

import numpy as np


class Budget:
    """Bytes of staged rows the writer's stagings may keep in memory between them."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.used = 0
        self.stagings: list = []       # those keeping rows: each spills them when the budget is passed

    def take(self, nbytes: int) -> bool:
        if self.used + nbytes > self.limit:
            return False
        self.used += nbytes
        return True

    def give_up(self) -> None:
        """Every staging writes what it kept into its files; no more is kept."""
        stagings, self.stagings = self.stagings, []
        self.limit = 0
        for stage in stagings:
            stage.spill_kept()


class KeptColumn:
    """A staged column held as the arrays appended, one after the other: rows counted
    from the first array's start (as in a spill file). Read by runs (runs.read_listed),
    each run within one array."""

    def __init__(self, name: str, dtype):
        self.name = name                 # for messages, as a spill file's name
        self.dtype = np.dtype(dtype)
        self.parts: list[np.ndarray] = []
        self._firsts: list[int] = []
        self.rows = 0
        self._starts: np.ndarray | None = None

    def append(self, values: np.ndarray) -> None:
        self.parts.append(values)
        self._firsts.append(self.rows)
        self.rows += len(values)
        self._starts = None

    def read(self, starts: np.ndarray, lengths: np.ndarray, copy: bool = True) -> np.ndarray:
        """The runs [start, start + length) one after another, as a new array; without
        `copy`, a single run is the appended array's own slice (the caller only reads it)."""
        if self._starts is None:
            self._starts = np.asarray(self._firsts, np.int64)
        if len(starts) == 1 and not copy:
            k, at = self._where(int(starts[0]))
            return self.parts[k][at:at + int(lengths[0])]
        out = np.empty(int(np.sum(lengths)), self.dtype)
        pos = 0
        for start, length in zip(starts.tolist(), lengths.tolist()):
            k, at = self._where(start)
            out[pos:pos + length] = self.parts[k][at:at + length]
            pos += length
        return out

    def views(self, starts: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
        """The runs [start, start + length) as the appended arrays' own slices, one a run
        (nothing copied: the caller only reads them)."""
        if self._starts is None:
            self._starts = np.asarray(self._firsts, np.int64)
        found = []
        for start, length in zip(starts.tolist(), lengths.tolist()):
            k, at = self._where(start)
            found.append(np.asarray(self.parts[k][at:at + length], self.dtype))
        return found

    def shared(self) -> "KeptColumn":
        """Another holder of the same arrays: each holder lets go of them apart (release)."""
        other = KeptColumn(self.name, self.dtype)
        other.parts, other._firsts, other.rows = list(self.parts), list(self._firsts), self.rows
        return other

    def release(self) -> None:
        """This holder's arrays let go (freed once no other holder has them); no more reads."""
        self.parts = []

    def _where(self, start: int) -> tuple[int, int]:
        k = int(np.searchsorted(self._starts, start, side="right")) - 1
        return k, start - int(self._starts[k])
