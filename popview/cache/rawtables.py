"""The sorted tables, uncompressed, kept only while a conversion builds its
derived data.

The derived builders (cumulative sums, pyramid) read every table once or
twice, in two processes; decompressing the cache for that cost as much as
writing it. They read raw column files instead, through `RawTables`, an
h5py-like read-only view (``tables["states"]["begin"][lo:hi]``,
``tables["states"]["offsets"]``, ``"calls" in tables``). A table whose rows
arrived in time order per location is read from the writer's spill through
its run index (adopted, not copied: writing a second gigabyte of scratch
files cost seconds); a table that had to be sorted is written here sorted.
The folder is removed with the rest of the conversion's scratch files.
A table whose rows the writer kept in memory (kept.py) is adopted as those
arrays: `SortedCopy.kept`, given to `RawTables` beside the folder (only a
reader in the same process can read it so).

Index files are bare little-endian int64 (`.i64`), never `.npy`: numpy parses
an `.npy` header with `ast.literal_eval`, and CPython 3.11's AST constructor
keeps one recursion counter per interpreter, so two conversions in threads
(the window opens several runs at once) failed with "AST constructor
recursion depth mismatch".
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from popview.cache import schema
from popview.cache import narrow
from popview.cache.kept import KeptColumn
from popview.cache.runs import RunIndex, save_raw


class SortedCopy:
    """Writes the raw copy: one table at a time, its rows in sorted order."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._files: dict = {}
        self.kept: dict[str, dict[str, KeptColumn]] = {}     # tables adopted as the writer's memory

    def begin(self, table: str) -> None:
        self.end()
        self._files = {name: open(self.folder / f"{table}.{name}", "wb") for name, _ in schema.columns(table)}

    def append(self, table: str, data: dict[str, np.ndarray]) -> None:
        for name, dtype in schema.columns(table):
            self._files[name].write(np.ascontiguousarray(data[name], dtype=dtype).data)

    def finish(self, table: str, offsets: np.ndarray) -> None:
        """The table is complete: its per-location offsets mark it present."""
        self.end()
        save_raw(self.folder / f"{table}.offsets.i64", np.ascontiguousarray(offsets, np.int64))

    def adopt(self, table: str, spill: dict[str, Path | KeptColumn], runs: RunIndex, offsets: np.ndarray,
              layouts: dict[str, narrow.ColumnLayout] | None = None, bases: narrow.RunBases | None = None) -> None:
        """The table is the writer's spill files, read through their run index: linked
        here, since the writer reads them too and removes its own names when done; or
        the columns it kept in memory, held here. `layouts`: those of its columns with
        narrow chunks and their runs' `bases` (narrow.py), saved beside the run index."""
        self.end()
        for name, path in spill.items():
            if isinstance(path, KeptColumn):
                self.kept.setdefault(table, {})[name] = path.shared()     # the writer lets go of its own
            else:
                os.link(path, self.folder / f"{table}.{name}")
        runs.save(self.folder / f"{table}.runs.i64")
        if layouts:
            narrow.save(self.folder / f"{table}.layout.i64", layouts, bases or narrow.RunBases(),
                        [name for name, _ in schema.columns(table)])
        self.finish(table, offsets)

    def keep(self, table: str, parts: list[dict[str, np.ndarray]], offsets: np.ndarray) -> None:
        """The table, sorted, from parts of whole locations in order, held here as those arrays
        (not written: read by a RawTables of this process only) and read through the runs of
        its locations, as a table adopted from memory is."""
        self.end()
        loc_name = schema.TABLES[table][0]
        counts = np.diff(offsets)
        present = np.flatnonzero(counts)
        runs = RunIndex(present.astype(np.int64), np.ascontiguousarray(offsets[:-1][present], np.int64),
                        np.ascontiguousarray(counts[present], np.int64), len(counts))
        columns = {}
        for name, dtype in schema.columns(table):
            if name == loc_name:
                continue                    # told by the runs
            columns[name] = KeptColumn(f"{table}.{name}", dtype)
            for part in parts:
                if len(part[name]):
                    columns[name].append(np.ascontiguousarray(part[name], dtype))
        self.kept[table] = columns
        runs.save(self.folder / f"{table}.runs.i64")
        self.finish(table, offsets)

    def release_kept(self) -> None:
        """The columns adopted from memory let go of (freed once no other holder has them):
        for when every reader of the copy is done."""
        for columns in self.kept.values():
            for column in columns.values():
                column.release()

    def adopt_segments(self, table: str, segments: list[dict[str, Path]], rows: list[int],
                       offsets: np.ndarray) -> None:
        """The table is the sorted column files of consecutive location groups (written by Dask
        tasks: popview.cache.groups), `rows[k]` rows each: linked here, read as one column."""
        self.end()
        for k, files in enumerate(segments):
            for name, path in files.items():
                os.link(path, self.folder / f"{table}.{name}.{k}")
        save_raw(self.folder / f"{table}.segments.i64",
                 np.concatenate(([0], np.cumsum(rows, dtype=np.int64))).astype("<i8"))
        self.finish(table, offsets)

    def end(self) -> None:
        for f in self._files.values():
            f.close()
        self._files = {}


class RawTables:
    """Read-only view of a SortedCopy folder, shaped like the cache's HDF5 groups (with the
    SortedCopy's `kept` columns: those of the tables adopted from memory)."""

    def __init__(self, folder: Path, kept: dict[str, dict[str, KeptColumn]] | None = None,
                 sole_reader: bool = False):
        """`sole_reader`: one builder reads these tables, never changing what it reads (a
        location's rows kept in memory are given as the kept arrays' slices, not copies), and
        says when it is done (done_reading: the kept columns are let go of then)."""
        self.folder = Path(folder)
        self.kept = kept or {}
        self.sole_reader = sole_reader
        self._open: dict[str, RawTable] = {}

    def done_reading(self) -> None:
        """What a builder calls once it has read the tables for good (the cumulative sums, before
        writing what they gathered: their peak): for a sole reader, the columns kept in memory
        are let go of here (no reads after)."""
        if self.sole_reader:
            for columns in self.kept.values():
                for column in columns.values():
                    column.release()

    def __contains__(self, table: str) -> bool:
        return table in schema.TABLES and (self.folder / f"{table}.offsets.i64").exists()

    def __getitem__(self, table: str) -> "RawTable":
        if table not in self._open:
            if table not in self:
                raise KeyError(table)
            self._open[table] = RawTable(self.folder, table, self.kept.get(table, {}), self.sole_reader)
        return self._open[table]


class RawTable:
    def __init__(self, folder: Path, table: str, kept: dict[str, KeptColumn] | None = None, views: bool = False):
        self.folder, self.table, self.kept, self.views = folder, table, kept or {}, views
        self._offsets = np.fromfile(folder / f"{table}.offsets.i64", np.int64)
        self._dtypes = dict(schema.columns(table))
        runs = folder / f"{table}.runs.i64"
        self._runs = RunIndex.load(runs) if runs.exists() else None
        layout = folder / f"{table}.layout.i64"
        self._narrow = narrow.load(layout, [name for name, _ in schema.columns(table)]) if layout.exists() \
            else ({}, None)
        segments = folder / f"{table}.segments.i64"
        self._segments = np.fromfile(segments, "<i8").astype(np.int64) if segments.exists() else None

    def __contains__(self, name: str) -> bool:
        return name == "offsets" or name in self._dtypes

    def __getitem__(self, name: str):
        if name == "offsets":
            return self._offsets
        path = self.kept.get(name) or self.folder / f"{self.table}.{name}"
        layouts, bases = self._narrow
        if name in layouts and name not in self.kept:
            path = narrow.SpillFile(path, layouts[name], bases)
        if self._runs is not None:
            spilled = name != schema.TABLES[self.table][0]      # the locations are told by the runs
            return SpillColumn(path, self._dtypes[name], self._offsets, self._runs, spilled,
                               copy=not (self.views and name in self.kept))
        if self._segments is not None:
            return SegmentedColumn(path, self._dtypes[name], self._segments)
        return RawColumn(path, self._dtypes[name], int(self._offsets[-1]))


class RawColumn:
    """One column: contiguous slices are read into new arrays (no memory map, so
    only what is read counts as the process's memory)."""

    def __init__(self, path: Path, dtype, rows: int):
        self.path, self.dtype, self.shape = path, np.dtype(dtype), (rows,)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        lo, hi = _bounds(self.path, key, self.shape[0])
        out = np.empty(hi - lo, self.dtype)
        if len(out):
            _read_into(self.path, out, lo * self.dtype.itemsize)
        return out


class SpillColumn(RawColumn):
    """One column of a spill: sorted rows [lo, hi) gathered from the parts of the runs
    of the locations they belong to that hold them."""

    def __init__(self, path: "Path | KeptColumn | narrow.SpillFile", dtype, offsets: np.ndarray, runs: RunIndex,
                 spilled: bool = True,
                 copy: bool = True):
        """Without `copy`, rows kept in memory in one run are read as their slice (kept.py)."""
        super().__init__(path, dtype, int(offsets[-1]))
        self.offsets, self.runs, self.spilled, self.copy = offsets, runs, spilled, copy

    def __getitem__(self, key) -> np.ndarray:
        lo, hi = _bounds(self.path, key, self.shape[0])
        if hi <= lo:
            return np.zeros(0, self.dtype)
        a = int(np.searchsorted(self.offsets, lo, side="right")) - 1
        b = int(np.searchsorted(self.offsets, hi, side="left"))
        return self.runs.read(self.path if self.spilled else None, self.dtype, a, b, lo - int(self.offsets[a]),
                              hi - lo, self.copy)


    def pieces(self, lo: int, hi: int) -> list[np.ndarray] | None:
        """Rows [lo, hi) as the slices of the arrays kept in memory that hold them, in order
        (their concatenation is self[lo:hi]; nothing copied, only to be read), or None when
        the column is not kept in memory."""
        if not isinstance(self.path, KeptColumn):
            return None
        if hi <= lo:
            return []
        a = int(np.searchsorted(self.offsets, lo, side="right")) - 1
        b = int(np.searchsorted(self.offsets, hi, side="left"))
        return self.runs.views(self.path, a, b, lo - int(self.offsets[a]), hi - lo)


class SegmentedColumn(RawColumn):
    """One column kept as consecutive segment files (`<path>.0`, `<path>.1`, ...; segment
    k holds rows [starts[k], starts[k + 1]))."""

    def __init__(self, path: Path, dtype, starts: np.ndarray):
        super().__init__(path, dtype, int(starts[-1]))
        self.starts = starts

    def __getitem__(self, key) -> np.ndarray:
        lo, hi = _bounds(self.path, key, self.shape[0])
        out = np.empty(hi - lo, self.dtype)
        k = int(np.searchsorted(self.starts, lo, side="right")) - 1
        pos = lo
        while pos < hi:
            end = min(hi, int(self.starts[k + 1]))
            if end > pos:
                _read_into(self.path.with_name(f"{self.path.name}.{k}"), out[pos - lo:end - lo],
                           (pos - int(self.starts[k])) * self.dtype.itemsize)
            pos = end
            k += 1
        return out


def _bounds(path: Path, key, n: int) -> tuple[int, int]:
    if key == ():
        key = slice(None)
    if not isinstance(key, slice) or key.step not in (None, 1):
        raise TypeError(f"{path.name}: only contiguous slices can be read")
    lo, hi, _ = key.indices(n)
    return lo, max(hi, lo)


def _read_into(path: Path, out: np.ndarray, offset: int) -> None:
    view = memoryview(out).cast("B")
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        done = 0
        while done < len(view):
            n = f.readinto(view[done:])
            if not n:
                raise OSError(f"{path}: {len(view) - done} bytes missing")
            done += n
