"""Time by category (and per OpenMP region) up to any instant, from the
cache's cumulative group.

A query reads the checkpoints (in memory) and one slab of at most CHECK
rows per location and distinct checkpoint, so a window costs
O(locations x (log rows + CHECK)), whatever the length of the trace.
"""
from __future__ import annotations

import json

import h5py
import numpy as np

from popview.cache.cumulative import CAT, N_CAT


class CumulativeIndex:
    def __init__(self, reader):
        if "cumulative" not in reader.h5:
            raise KeyError(f"{reader.path}: the cache has no cumulative sums (convert it again)")
        g = reader.h5["cumulative"]
        self.group = g
        self.seg, self.ctr = g["seg"], g["ctr"]
        self.offsets = reader.offsets("states")
        self.counter_names: list[str] = json.loads(g.attrs["counters"])
        self.region_callpaths: list[int] = json.loads(g.attrs.get("regions", "[]"))
        self.n_regions = len(self.region_callpaths)
        self.ck_row = g["ck_row"][:]
        self.ck_begin = g["ck_begin"][:]
        self.ck_cum = g["ck_cum"][:]
        self.ck_ctr = g["ck_ctr"][:]
        self.ck_off = np.searchsorted(self.ck_row, self.offsets)
        self.totals = g["totals"][:]
        self.ctr_totals = g["ctr_totals"][:]
        self.width = self.totals.shape[1]
        n = len(self.offsets) - 1
        self.first_begin = np.full(n, np.iinfo(np.int64).max)
        has = self.ck_off[:-1] < self.ck_off[1:]
        self.first_begin[has] = self.ck_begin[self.ck_off[:-1][has]]

    def at(self, locations, x) -> tuple[np.ndarray, np.ndarray]:
        """(sums in ns: categories then region columns, counters) accumulated on each
        location before x (x: one instant, or one per location)."""
        locations = np.asarray(locations, np.int64)
        xs = np.broadcast_to(np.asarray(x, np.int64), locations.shape)
        cum = np.zeros((len(locations), self.width))
        ctr = np.zeros((len(locations), len(self.counter_names)))
        for i, (loc, t) in enumerate(zip(locations.tolist(), xs.tolist())):
            c, k = self.location_at(loc, np.array([t]))
            cum[i], ctr[i] = c[0], k[0]
        return cum, ctr

    def location_at(self, loc: int, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sums on one location before each of `times`, reading each needed slab once."""
        times = np.asarray(times, np.int64)
        cum = np.zeros((len(times), self.width))
        ctr = np.zeros((len(times), len(self.counter_names)))
        a, b = int(self.ck_off[loc]), int(self.ck_off[loc + 1])
        if a == b:
            return cum, ctr
        j = a + np.searchsorted(self.ck_begin[a:b], times, side="left") - 1
        for jj in np.unique(j[times > self.first_begin[loc]]).tolist():
            sel = np.flatnonzero((j == jj) & (times > self.first_begin[loc]))
            self._from_slab(loc, jj, b, times[sel], cum, ctr, sel)
        return cum, ctr

    def _from_slab(self, loc, j, b, ts, cum, ctr, sel) -> None:
        row0 = int(self.ck_row[j])
        row1 = int(self.ck_row[j + 1]) if j + 1 < b else int(self.offsets[loc + 1])
        seg = _read_rows(self.seg, row0, row1)
        ctr_rows = _read_rows(self.ctr, row0, row1).astype(np.float64)
        begin = seg[:, 0]
        word = seg[:, 1]
        dur = (word >> 16).astype(np.float64)
        reg = ((word >> 8) & 255).astype(np.int64) - 1
        cat = (word & 255).astype(np.int64)
        weights = np.zeros((len(begin), self.width))
        rows = np.arange(len(begin))
        weights[rows, cat] = dur
        inr = reg >= 0
        weights[rows[inr], N_CAT + reg[inr]] += dur[inr]
        use = inr & (cat <= CAT["comp_parallel"])
        weights[rows[use], N_CAT + self.n_regions + reg[use]] += dur[use]
        cw = np.vstack((np.zeros((1, self.width)), np.cumsum(weights, axis=0)))
        cc = np.vstack((np.zeros((1, ctr_rows.shape[1])), np.cumsum(ctr_rows, axis=0)))
        k = np.searchsorted(begin, ts, side="left")
        out = self.ck_cum[j] + cw[k]
        outc = self.ck_ctr[j] + cc[k]
        last = k - 1
        over = np.maximum(begin[last] + dur[last] - ts, 0)
        frac = over / np.maximum(dur[last], 1)
        out -= weights[last] * frac[:, None]
        outc -= ctr_rows[last] * frac[:, None]
        cum[sel], ctr[sel] = out, outc


def _read_rows(dset: h5py.Dataset, lo: int, hi: int) -> np.ndarray:
    """dset[lo:hi] through the low-level API (a tenth of the high-level call's overhead)."""
    shape = (hi - lo,) + dset.shape[1:]
    out = np.empty(shape, dset.dtype)
    if hi <= lo:
        return out
    fspace = dset.id.get_space()
    fspace.select_hyperslab((lo,) + (0,) * (len(shape) - 1), shape)
    dset.id.read(h5py.h5s.create_simple(shape), fspace, out)
    return out
