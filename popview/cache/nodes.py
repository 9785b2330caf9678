"""Groups and datasets of a cache as the rest of popview sees them: numpy arrays
and plain attribute values, never h5py objects.

The analysis and the window read derived data (cumulative sums, pyramids, tiles)
through these; a read failing on a chunk damaged since the cache was opened
raises CacheDamaged naming the cache, as Reader.read does.
"""
from __future__ import annotations

import h5py
import numpy as np

from popview.cache.chunk_reads import read_ranges, read_rows
from popview.cache.errors import CacheDamaged


class Dataset:
    """An array stored in the cache: slicing reads it (only the slice)."""

    def __init__(self, dset: h5py.Dataset, cache):
        self._d, self._cache = dset, cache
        self.shape, self.dtype, self.size = dset.shape, dset.dtype, dset.size
        self.attrs = Attributes(dset.attrs)

    def __getitem__(self, key) -> np.ndarray:
        try:
            if isinstance(key, slice) and key.step in (None, 1) and len(self.shape) == 1:
                lo, hi, _ = key.indices(self.shape[0])
                return read_rows(self._d, lo, hi)
            return self._d[key]
        except OSError as exc:
            raise _damaged(self._cache, self._d.name, exc) from None

    def __len__(self) -> int:
        return self.shape[0]

    def read_rows(self, ranges: list[tuple[int, int]]) -> np.ndarray:
        """The rows of sorted, disjoint [lo, hi) ranges, concatenated. A 2-D dataset: one
        low-level read per range (each lies inside one chunk, and HDF5 handles a union of
        many hyperslabs far slower than the separate reads); a column: their chunks decoded
        together (chunk_reads.read_ranges)."""
        if len(self.shape) == 1:
            try:
                return read_ranges(self._d, ranges)
            except OSError as exc:
                raise _damaged(self._cache, self._d.name, exc) from None
        ncols = self.shape[1]
        out = np.empty((sum(hi - lo for lo, hi in ranges), ncols), self.dtype)
        fspace = self._d.id.get_space()
        pos = 0
        try:
            for lo, hi in ranges:
                fspace.select_hyperslab((lo, 0), (hi - lo, ncols))
                self._d.id.read(h5py.h5s.create_simple((hi - lo, ncols)), fspace, out[pos:pos + hi - lo])
                pos += hi - lo
        except OSError as exc:
            raise _damaged(self._cache, self._d.name, exc) from None
        return out


class Group:
    """A group of the cache: `name in group`, `group[name]` (a Group or a Dataset)."""

    def __init__(self, group: h5py.Group, cache):
        self._g, self._cache = group, cache
        self.attrs = Attributes(group.attrs)

    def __contains__(self, name: str) -> bool:
        return name in self._g

    def __getitem__(self, name: str) -> "Group | Dataset":
        node = self._g[name]
        return Group(node, self._cache) if isinstance(node, h5py.Group) else Dataset(node, self._cache)

    def get(self, name: str):
        return self[name] if name in self else None

    def raw(self) -> h5py.Group:
        """The h5py group, for the cache package's own readers (profile_store)."""
        return self._g


class Attributes:
    """Attribute values as Python / numpy values (h5py returns them as such already)."""

    def __init__(self, attrs):
        self._a = attrs

    def __getitem__(self, name: str):
        return self._a[name]

    def __contains__(self, name: str) -> bool:
        return name in self._a

    def get(self, name: str, default=None):
        return self._a.get(name, default)


def _damaged(cache, name: str, exc: OSError) -> CacheDamaged:
    from popview.cache.integrity import first_line

    return CacheDamaged(f"{cache}: cache damaged while reading {name} ({first_line(exc)}); "
                        "it will be converted again")
