"""When each hardware counter was counted, in traces whose counter sets rotate.

Extrae can multiplex PAPI counter sets: event 41999999 ("Active hardware
counter set") switches the set, and a counter of another set is not read
meanwhile. SPEC 444.namd (bsc-folding) rotates three sets on one thread:
PAPI_TOT_CYC and PAPI_TOT_INS are read during 176 s of its 557 s. Dividing
the cycles by all the useful time gave a clock rate of 0.76 GHz (2.4 GHz
while counted); instruction totals miss what the other sets' periods
executed.

A counter is counted in a period (between two set changes, on one location)
when one of its readings there is nonzero; a reading at t belongs to the
interval ending at t (at a change Extrae writes the old set's last deltas
and the new set's zeros at the same time). `shares` gives, per rotating
counter, the part of a window's useful time (over all locations) during
which it was counted.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.computed_once import ComputedOnce

SET_EVENT = 41999999

_CACHE = ComputedOnce(16)


@dataclass(frozen=True)
class Periods:
    """Per location with a rotation: period bounds (ns, from 0 to the end) and, per counter,
    whether it was counted in each period."""

    bounds: dict[int, np.ndarray]
    counted: dict[int, dict[str, np.ndarray]]

    @property
    def rotating(self) -> set[str]:
        """Counters not counted in some period of some location."""
        return {name for per_loc in self.counted.values() for name, on in per_loc.items() if not on.all()}


NONE = Periods({}, {})


def periods(exp) -> Periods:
    """The rotation periods of `exp` (NONE when no location changes its counter set),
    computed once per cache file."""
    defs = exp.definitions
    if SET_EVENT not in defs.event_types or not defs.counters or not exp.is_trace:
        return NONE
    key = (str(exp.cache_path), exp.reader.fingerprint)
    return _CACHE.get(key, lambda: _periods(exp))


SCAN_ROWS = 1 << 22      # events read at a time looking for set changes (16 MiB of types)


def _rotates(exp) -> bool:
    """Whether some location changes its counter set more than once: every Extrae trace
    declares the set event and writes it once per thread at start; a rotation changes it on
    every thread, every few global operations or seconds -- from whenever the run's
    configuration says, which may be hours in. The whole type column is read by blocks of
    SCAN_ROWS rows, in row order, and each set event's location found from the offsets
    (numpy, no loop over records); the scan stops at the first location seen changing twice.
    Only the first location's first 2^20 events were looked at: a rotation starting later
    was taken for one set, every counter for read all the time (clock rate, IPC, instructions
    wrong). A run without rotation is read whole: 0.1-0.2 s per 10^7 events (docs/metrics.md)."""
    reader = exp.reader
    if not reader.has("events"):
        return False
    off = np.asarray(reader.offsets("events"), np.int64)
    seen = np.zeros(len(off) - 1, np.int64)
    for lo in range(int(off[0]), int(off[-1]), SCAN_ROWS):
        hi = min(lo + SCAN_ROWS, int(off[-1]))
        rows = np.flatnonzero(reader.rows("events", "type", lo, hi) == SET_EVENT) + lo
        if rows.size:
            seen += np.bincount(np.searchsorted(off, rows, side="right") - 1, minlength=len(seen))
            if int(seen.max()) > 1:
                return True
    return False


def _periods(exp) -> Periods:
    defs = exp.definitions
    codes = {c: et.name for c, et in defs.event_types.items() if et.kind == "counter" and et.name in defs.counters}
    if not codes or not _rotates(exp):
        return NONE
    code_array = np.array(sorted(codes), np.int64)
    bounds, counted = {}, {}
    for loc in range(defs.n_locations):
        ev = exp.reader.read("events", locations=[loc], columns=["time", "type", "value"])
        changes = ev["time"][ev["type"] == SET_EVENT]
        if len(changes) < 2:
            continue
        b = np.unique(np.r_[0, changes[1:], max(int(defs.t_end), int(changes[-1]) + 1)]).astype(np.int64)
        read = np.isin(ev["type"], code_array) & (ev["value"] != 0)
        t, ty = ev["time"][read], ev["type"][read]
        period = np.clip(np.searchsorted(b, t, side="left") - 1, 0, len(b) - 2)
        per = {}
        for code, name in codes.items():
            on = np.zeros(len(b) - 1, bool)
            on[period[ty == code]] = True
            per[name] = on
        bounds[loc], counted[loc] = b, per
    if not bounds:
        return NONE
    return Periods(bounds, counted)


def shares(exp, index, locs: np.ndarray, t0: int, t1: int) -> dict[str, float]:
    """Per rotating counter: the share of the useful time of `locs` in [t0, t1) during which it
    was counted (1.0 for counters that never rotate are left out)."""
    p = periods(exp)
    names = sorted(p.rotating)
    if not names:
        return {}
    from popview.model.categories import CAT
    useful_cols = [CAT["comp_serial"], CAT["comp_parallel"]]
    requests, rows = [], []
    for loc in locs.tolist():
        b = p.bounds.get(loc)
        edges = np.array([t0, t1], np.int64) if b is None else np.unique(np.clip(np.r_[t0, b, t1], t0, t1))
        requests.append((loc, edges))
        rows.append((loc, edges))
    res = index.evaluate(requests)
    total = 0.0
    counted = {name: 0.0 for name in names}
    for (loc, edges), (cum, _) in zip(rows, res):
        useful = np.diff(cum[:, useful_cols].sum(axis=1))          # per piece between edges
        total += float(useful.sum())
        b = p.bounds.get(loc)
        for name in names:
            if b is None:
                counted[name] += float(useful.sum())
                continue
            mid = (edges[:-1] + edges[1:]) // 2
            period = np.clip(np.searchsorted(b, mid, side="right") - 1, 0, len(b) - 2)
            counted[name] += float(useful[p.counted[loc][name][period]].sum())
    if total <= 0:
        return {}
    return {name: counted[name] / total for name in names}


def mixed_rows(exp, locs: np.ndarray, t0: int, t1: int) -> bool:
    """Whether a useful state overlapping [t0, t1) spans a counter-set change: a window's counters
    are its rows' readings pro-rated by time (popview.analysis.window_index), so such a row gives
    the window readings of sets it was not counting in (namd: one Running state over 557 s)."""
    from popview.model.states import StateClass, class_lookup
    p = periods(exp)
    if not p.bounds:
        return False
    useful = class_lookup(exp.definitions.states, 64) == int(StateClass.USEFUL)
    for loc in locs.tolist():
        b = p.bounds.get(loc)
        if b is None or len(b) < 3:
            continue
        s = exp.reader.read("states", locations=[loc], t0=t0, t1=t1, columns=["begin", "end", "state"])
        code = s["state"].astype(np.int64)
        keep = useful[np.clip(code, 0, len(useful) - 1)] & (code >= 0) & (code < len(useful))
        begin, end = s["begin"][keep], s["end"][keep]
        inner = b[1:-1]
        # a change strictly inside a row: the first change after its begin comes before its end
        k = np.searchsorted(inner, begin, side="right")
        if np.any((k < len(inner)) & (inner[np.minimum(k, len(inner) - 1)] < end)):
            return True
    return False
