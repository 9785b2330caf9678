"""Time by category (and per OpenMP region) up to any instant, from the
cache's cumulative group: its whole-run sums (totals) in the cache, its rows
and checkpoints in the window sums (popview.cache.window_sums), opened, or
built from the cache, at the first window evaluated (or `prepare()`).

A query reads the checkpoints (in memory) and one slab of at most CHECK
rows per location and distinct checkpoint, so a window costs
O(locations x (log rows + CHECK)), whatever the length of the trace.
"""
from __future__ import annotations

import json

import numpy as np

from popview.jit import njit
from popview.model.categories import CAT, N_CAT

USEFUL_LAST = CAT["comp_parallel"]      # categories 0..USEFUL_LAST are useful computation


class CumulativeIndex:
    def __init__(self, reader):
        g = reader.group("cumulative")
        if g is None:
            raise KeyError(f"{reader.path}: the cache has no cumulative sums (convert it again)")
        self.group = g
        self.reader = reader
        self.offsets = reader.offsets("states")
        self.counter_names: list[str] = json.loads(g.attrs["counters"])
        self.region_callpaths: list[int] = json.loads(g.attrs.get("regions", "[]"))
        self.n_regions = len(self.region_callpaths)
        self.totals = g["totals"][:]
        self.ctr_totals = g["ctr_totals"][:]
        self.width = self.totals.shape[1]
        self.seg = None

    def prepare(self, progress=None) -> None:
        """The rows and checkpoints read in: the window sums opened, or built now from the
        cache (`progress`, a popview.cache.Progress, reports and cancels the build)."""
        if self.seg is not None:
            return
        g = self.reader.window_sums(progress)
        if g is None or "seg" not in g:
            raise KeyError(f"{self.reader.path}: the cache has no cumulative sums (convert it again)")
        self.ck_row = g["ck_row"][:]
        self.ck_begin = g["ck_begin"][:]
        self.ck_cum = g["ck_cum"][:]
        self.ck_ctr = g["ck_ctr"][:]
        self.ck_off = np.searchsorted(self.ck_row, self.offsets)
        n = len(self.offsets) - 1
        self.first_begin = np.full(n, np.iinfo(np.int64).max)
        has = self.ck_off[:-1] < self.ck_off[1:]
        self.first_begin[has] = self.ck_begin[self.ck_off[:-1][has]]
        self.seg = g["seg"]

    def evaluate(self, requests: list[tuple[int, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each (location, times): the sums before each time, reading each
        needed slab once."""
        self.prepare()
        out, slabs = [], {}
        for loc, times in requests:
            times = np.asarray(times, np.int64)
            cum = np.zeros((len(times), self.width))
            ctr = np.zeros((len(times), len(self.counter_names)))
            out.append((cum, ctr))
            a, b = int(self.ck_off[loc]), int(self.ck_off[loc + 1])
            if a == b:
                continue
            j = a + np.searchsorted(self.ck_begin[a:b], times, side="left") - 1
            for i in np.flatnonzero(times > self.first_begin[loc]).tolist():
                row0 = int(self.ck_row[j[i]])
                row1 = int(self.ck_row[j[i] + 1]) if j[i] + 1 < b else int(self.offsets[loc + 1])
                slabs.setdefault((row0, row1), []).append((len(out) - 1, i, int(j[i]), int(times[i])))
        if not slabs:
            return out
        ranges = sorted(slabs)
        data = self.seg.read_rows(ranges)
        pos = 0
        for row0, row1 in ranges:
            slab = data[pos:pos + row1 - row0]
            pos += row1 - row0
            counts = np.ascontiguousarray(slab[:, 2:]).view(np.float64)   # stored as float64 bits
            for req, i, j, t in slabs[(row0, row1)]:
                c, k = slab_sums(slab, counts, t, self.width, self.n_regions)
                out[req][0][i] = self.ck_cum[j] + c
                out[req][1][i] = self.ck_ctr[j] + k
        return out


@njit(cache=True, nogil=True)
def slab_sums(slab, counts, t, width, n_regions):
    """Sums of the slab's rows before t (the row across t counted up to t)."""
    n_ctr = counts.shape[1]
    out = np.zeros(width)
    ctr = np.zeros(n_ctr)
    for r in range(slab.shape[0]):
        begin = slab[r, 0]
        if begin >= t:
            break
        word = slab[r, 1]
        dur = word >> 16
        reg = ((word >> 8) & 255) - 1
        cat = word & 255
        part = min(dur, t - begin)
        frac = part / dur if dur > 0 else 1.0
        out[cat] += part
        if reg >= 0:
            out[N_CAT + reg] += part
            if cat <= USEFUL_LAST:
                out[N_CAT + n_regions + reg] += part
        for c in range(n_ctr):
            ctr[c] += counts[r, c] * frac
    return out, ctr
