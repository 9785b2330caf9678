"""An uncompressed copy of the sorted tables, kept only while a conversion
builds its derived data.

The derived builders (cumulative sums, pyramid) read every table once or
twice, in two processes; decompressing the cache for that cost as much as
writing it. The writer therefore also writes each sorted table as raw column
files beside the cache, and the builders read those through `RawTables`, an
h5py-like read-only view (``tables["states"]["begin"][lo:hi]``,
``tables["states"]["offsets"]``, ``"calls" in tables``). The folder is
removed with the rest of the conversion's scratch files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from popview.cache import schema


class SortedCopy:
    """Writes the raw copy: one table at a time, its rows in sorted order."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._files: dict = {}

    def begin(self, table: str) -> None:
        self.end()
        self._files = {name: open(self.folder / f"{table}.{name}", "wb") for name, _ in schema.columns(table)}

    def append(self, table: str, data: dict[str, np.ndarray]) -> None:
        for name, dtype in schema.columns(table):
            self._files[name].write(np.ascontiguousarray(data[name], dtype=dtype).data)

    def finish(self, table: str, offsets: np.ndarray) -> None:
        """The table is complete: its per-location offsets mark it present."""
        self.end()
        np.save(self.folder / f"{table}.offsets.npy", np.asarray(offsets, np.int64))

    def end(self) -> None:
        for f in self._files.values():
            f.close()
        self._files = {}


class RawTables:
    """Read-only view of a SortedCopy folder, shaped like the cache's HDF5 groups."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def __contains__(self, table: str) -> bool:
        return table in schema.TABLES and (self.folder / f"{table}.offsets.npy").exists()

    def __getitem__(self, table: str) -> "RawTable":
        if table not in self:
            raise KeyError(table)
        return RawTable(self.folder, table)


class RawTable:
    def __init__(self, folder: Path, table: str):
        self.folder, self.table = folder, table
        self._offsets = np.load(folder / f"{table}.offsets.npy", allow_pickle=False)
        self._dtypes = dict(schema.columns(table))

    def __contains__(self, name: str) -> bool:
        return name == "offsets" or name in self._dtypes

    def __getitem__(self, name: str):
        if name == "offsets":
            return self._offsets
        return RawColumn(self.folder / f"{self.table}.{name}", self._dtypes[name], int(self._offsets[-1]))


class RawColumn:
    """One column: contiguous slices are read into new arrays (no memory map, so
    only what is read counts as the process's memory)."""

    def __init__(self, path: Path, dtype, rows: int):
        self.path, self.dtype, self.shape = path, np.dtype(dtype), (rows,)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        if key == ():
            key = slice(None)
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError(f"{self.path.name}: only contiguous slices can be read")
        lo, hi, _ = key.indices(self.shape[0])
        out = np.empty(max(hi - lo, 0), self.dtype)
        if len(out):
            _read_into(self.path, out, lo * self.dtype.itemsize)
        return out


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
