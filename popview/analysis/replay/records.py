"""Cache rows for the replay: the calls table read once and shared,
chunked selection of other tables, and call-parameter look-ups."""
from __future__ import annotations

import numpy as np

from popview.cache import schema
from popview.jit import njit

BLOCK_ROWS = 1 << 22


def select(reader, table: str, key: str, wanted, columns: list[str]) -> dict[str, np.ndarray]:
    """Rows of `table` whose `key` column is in `wanted`, read in bounded blocks."""
    g = reader.group(table)
    n = reader.count(table)
    wanted = np.asarray(sorted(set(int(w) for w in wanted)), np.int64)
    parts: dict[str, list] = {c: [] for c in columns}
    if len(wanted) == 0 or n == 0:
        return {c: g[c][:0] for c in columns}
    for a in range(0, n, BLOCK_ROWS):
        b = min(n, a + BLOCK_ROWS)
        keep = np.flatnonzero(np.isin(g[key][a:b], wanted))
        if len(keep) == 0:
            continue
        for c in columns:
            parts[c].append(g[c][a:b][keep])
    return {c: (np.concatenate(p) if p else g[c][:0]) for c, p in parts.items()}


class Calls:
    """The calls table (loc, begin, end, callpath), read whole once per replay:
    collectives, one-sided MPI, OpenMP, the weights and the critical-path
    profile all select from it (reading it for each cost a full read each)."""

    COLUMNS = ["loc", "begin", "end", "callpath"]

    def __init__(self, reader):
        self.reader = reader
        self._all: dict[str, np.ndarray] | None = None

    def all(self) -> dict[str, np.ndarray]:
        if self._all is None:
            self._all = (self.reader.read("calls", columns=self.COLUMNS) if self.reader.has("calls")
                         else {c: schema.empty("calls")[c] for c in self.COLUMNS})
        return self._all

    def select(self, callpaths) -> dict[str, np.ndarray]:
        """Visits of the given call paths, in table order (location, then begin)."""
        cps = np.fromiter((int(c) for c in callpaths), np.int64)
        if len(cps) == 0:
            return {c: v[:0] for c, v in self.all().items()} if self._all is not None else {
                c: schema.empty("calls")[c] for c in self.COLUMNS}
        a = self.all()
        cp = a["callpath"]
        wanted = np.zeros(max(int(cps.max()), int(cp.max(initial=0))) + 1, bool)
        wanted[cps] = True
        rows = np.flatnonzero(wanted[cp])
        return {c: v[rows] for c, v in a.items()}


@njit(cache=True, nogil=True)
def value_within(q_loc, q_time, q_end, e_loc, e_time, e_value, default):
    """Value of the first event of location q_loc in [q_time, q_end] (a call's
    parameters: Extrae writes them at the call's entry, OTF2 at the collective's
    begin record inside the call); inputs sorted by (loc, time)."""
    out = np.full(len(q_loc), default, np.int64)
    j = 0
    for i in range(len(q_loc)):
        while j < len(e_loc) and (e_loc[j] < q_loc[i] or (e_loc[j] == q_loc[i] and e_time[j] < q_time[i])):
            j += 1
        if j < len(e_loc) and e_loc[j] == q_loc[i] and e_time[j] <= q_end[i]:
            out[i] = e_value[j]
    return out
