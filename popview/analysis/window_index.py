"""Time by category up to any instant, from the cache's cumulative group.

A query reads the checkpoints (in memory) and one slab of at most CHECK
rows per location, so a window costs O(locations x (log rows + CHECK)),
whatever the length of the trace.
"""
from __future__ import annotations

import json

import numpy as np

from popview.cache.cumulative import N_CAT


class CumulativeIndex:
    def __init__(self, reader):
        if "cumulative" not in reader.h5:
            raise KeyError(f"{reader.path}: the cache has no cumulative sums (convert it again)")
        g = reader.h5["cumulative"]
        self.group = g
        self.offsets = reader.offsets("states")
        self.counter_names: list[str] = json.loads(g.attrs["counters"])
        self.ck_row = g["ck_row"][:]
        self.ck_begin = g["ck_begin"][:]
        self.ck_cum = g["ck_cum"][:]
        self.ck_ctr = g["ck_ctr"][:]
        self.ck_off = np.searchsorted(self.ck_row, self.offsets)
        self.totals = g["totals"][:]
        self.ctr_totals = g["ctr_totals"][:]
        n = len(self.offsets) - 1
        self.first_begin = np.full(n, np.iinfo(np.int64).max)
        has = self.ck_off[:-1] < self.ck_off[1:]
        self.first_begin[has] = self.ck_begin[self.ck_off[:-1][has]]

    def at(self, locations: np.ndarray, x) -> tuple[np.ndarray, np.ndarray]:
        """(time per category in ns, counters) accumulated on each location before x
        (x: one instant, or one per location)."""
        locations = np.asarray(locations, np.int64)
        xs = np.broadcast_to(np.asarray(x, np.int64), locations.shape)
        cum = np.zeros((len(locations), N_CAT))
        ctr = np.zeros((len(locations), len(self.counter_names)))
        for i, (loc, t) in enumerate(zip(locations.tolist(), xs.tolist())):
            cum[i], ctr[i] = self._one(loc, t)
        return cum, ctr

    def _one(self, loc: int, t: int):
        a, b = int(self.ck_off[loc]), int(self.ck_off[loc + 1])
        if a == b or t <= self.first_begin[loc]:
            return 0.0, 0.0
        j = a + int(np.searchsorted(self.ck_begin[a:b], t, side="left")) - 1
        row0 = int(self.ck_row[j])
        row1 = int(self.ck_row[j + 1]) if j + 1 < b else int(self.offsets[loc + 1])
        seg = self.group["seg"][row0:row1]
        begin = seg[:, 0]
        dur = seg[:, 1] >> 8
        cat = (seg[:, 1] & 255).astype(np.int64)
        k = int(np.searchsorted(begin, t, side="left"))
        end_last = begin[k - 1] + dur[k - 1]
        if k == len(begin) and j + 1 >= b and end_last <= t:
            return self.totals[loc], self.ctr_totals[loc]
        cum = self.ck_cum[j] + np.bincount(cat[:k], weights=dur[:k], minlength=N_CAT)
        ctr_rows = self.group["ctr"][row0:row0 + k].astype(np.float64)
        ctr = self.ck_ctr[j] + ctr_rows.sum(axis=0)
        over = max(int(end_last) - t, 0)
        if over:
            cum[cat[k - 1]] -= over
            ctr -= ctr_rows[k - 1] * (over / max(int(dur[k - 1]), 1))
        return cum, ctr
