"""Sparse time index of a sorted table: every SPARSE_STEP-th time and, for
intervals, the running maximum of the ends within each location at the same
rows, so a window query reads only the slab it needs. Built from the sorted
pieces as they are written, so the table is never read back for it."""
from __future__ import annotations

import h5py
import numpy as np

from popview.cache import schema
from popview.cache.integrity import checked
from popview.jit import njit


class SparseIndex:
    """Collects the sampled rows of one table from consecutive sorted pieces,
    each holding whole locations."""

    def __init__(self, table: str):
        self.table = table
        self.step = schema.SPARSE_STEP
        self.interval = table in schema.INTERVAL_TABLES
        self._times: list[np.ndarray] = []
        self._ends: list[np.ndarray] = []

    def add(self, first_row: int, data: dict[str, np.ndarray]) -> None:
        """A piece starting at global row `first_row`."""
        loc_col, time_col, _ = schema.TABLES[self.table]
        start = (-first_row) % self.step
        # copies: a view would keep the whole piece alive
        self._times.append(np.array(data[time_col][start::self.step], np.int64))
        if self.interval:
            running = running_max_per_location(np.asarray(data[loc_col]), np.asarray(data["end"], np.int64))
            self._ends.append(running[start::self.step].copy())

    def samples(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """What `add` collected (times, running ends): for `extend` of another index."""
        return self._times, self._ends

    def extend(self, samples: tuple[list[np.ndarray], list[np.ndarray]]) -> None:
        """The samples of the next pieces, collected by another index (a Dask task's)."""
        self._times.extend(samples[0])
        self._ends.extend(samples[1])

    def write(self, group: h5py.Group) -> None:
        for name in ("sparse_time", "sparse_maxend"):
            if name in group:
                del group[name]
        group.create_dataset("sparse_time", data=_joined(self._times), **checked())
        if self.interval:
            group.create_dataset("sparse_maxend", data=_joined(self._ends), **checked())


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@njit(cache=True)
def running_max_per_location(loc, end):
    """The running maximum of `end`, restarted at each new location."""
    out = np.empty(len(end), np.int64)
    for i in range(len(end)):
        if i == 0 or loc[i] != loc[i - 1] or end[i] > out[i - 1]:
            out[i] = end[i]
        else:
            out[i] = out[i - 1]
    return out
