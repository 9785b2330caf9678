"""Paraver-style tables and histograms of a time window (no Qt).

* state x location: time in each thread state;
* MPI call x location and OpenMP construct x location: time, count and
  average duration of the region visits (clipped to the window);
* useful-burst duration x location: how many Running bursts fall in each
  (logarithmic) duration bin;
* burst duration x IPC: the 2D histogram of useful bursts, where counters
  (PAPI_TOT_INS, PAPI_TOT_CYC) exist.

Records are read location by location (bounded memory) and aggregated with
numpy; `cell_intervals` gives back the records behind one cell so the
timeline can highlight them.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np

from popview.model.states import RUNNING

KINDS = {"states": "State × location", "mpi": "MPI call × location", "openmp": "OpenMP construct × location",
         "useful": "Useful burst duration × location", "duration_ipc": "Burst duration × IPC"}


class NotAvailable(Exception):
    """A table the experiment has no data for; the message says why."""


@dataclass
class Table:
    """rows x columns of one or more statistics (NaN: no value)."""

    kind: str
    title: str
    row_labels: list[str]
    col_labels: list[str]
    stats: dict[str, np.ndarray]          # statistic -> [rows, cols]
    units: dict[str, str]
    t0: int
    t1: int
    col_keys: np.ndarray                  # state codes, region ids or bin edges
    row_keys: np.ndarray                  # location ids or bin edges
    notes: list[str] = field(default_factory=list)

    def totals(self, stat: str) -> np.ndarray:
        """Column totals (Paraver's "Total" row)."""
        return np.nansum(self.stats[stat], axis=0)


def window_of(exp, t0: int | None, t1: int | None) -> tuple[int, int]:
    end = max(int(exp.definitions.t_end), 1)
    a = 0 if t0 is None else max(int(t0), 0)
    b = end if t1 is None else min(int(t1), end)
    if b <= a:
        raise ValueError(f"empty time window [{a}, {b}]")
    return a, b


def _locations(exp) -> list[str]:
    """Row labels: the location's name, prefixed by its process's when names repeat (OTF2
    names every process's first thread "Master thread")."""
    defs = exp.definitions
    names = [loc.name for loc in defs.locations]
    if len(set(names)) == len(names):
        return names
    procs = defs.processes
    return [f"{procs[loc.process].name} · {loc.name}" if 0 <= loc.process < len(procs) else loc.name
            for loc in defs.locations]


def _clipped(begin, end, t0, t1) -> np.ndarray:
    return np.clip(np.minimum(end, t1) - np.maximum(begin, t0), 0, None)


def build(exp, kind: str, t0: int | None = None, t1: int | None = None, bins: int = 20) -> Table:
    """The table `kind` (a key of KINDS) for [t0, t1) (default the whole run)."""
    a, b = window_of(exp, t0, t1)
    if kind == "states":
        return state_table(exp, a, b)
    if kind in ("mpi", "openmp"):
        return region_table(exp, kind, a, b)
    if kind == "useful":
        return useful_histogram(exp, a, b, bins)
    if kind == "duration_ipc":
        return duration_ipc_histogram(exp, a, b, bins)
    raise ValueError(f"unknown table {kind!r}: one of {', '.join(KINDS)}")


def state_table(exp, t0: int, t1: int) -> Table:
    """Time (ns) and % of the window per state and location."""
    defs = exp.definitions
    n_loc = len(defs.locations)
    codes = np.array(sorted(c for c in defs.states if c >= 0), np.int64)
    time = np.zeros((n_loc, len(codes)))
    bursts = np.zeros((n_loc, len(codes)))
    for loc in range(n_loc):
        st = exp.reader.read("states", [loc], t0, t1, columns=["begin", "end", "state"])
        col = np.searchsorted(codes, st["state"])
        ok = (col < len(codes)) & (codes[np.minimum(col, len(codes) - 1)] == st["state"])
        time[loc] = np.bincount(col[ok], weights=_clipped(st["begin"], st["end"], t0, t1)[ok], minlength=len(codes))
        bursts[loc] = np.bincount(col[ok], minlength=len(codes))
    used = (time.sum(axis=0) > 0)
    if not used.any():
        raise NotAvailable("no thread states in this window")
    codes, time, bursts = codes[used], time[:, used], bursts[:, used]
    return Table("states", KINDS["states"], _locations(exp), [defs.states[int(c)]["name"] for c in codes],
                 {"time": time, "% time": time / (t1 - t0) * 100, "bursts": bursts,
                  "average burst": _ratio(time, bursts)},
                 {"time": "ns", "% time": "%", "bursts": "", "average burst": "ns"}, t0, t1, codes,
                 np.arange(n_loc), notes=_cut_short(exp, t0, t1) + _unrecorded(time, t0, t1))


def _cut_short(exp, t0: int, t1: int) -> list[str]:
    """A note when the window reaches past the last record of a truncated trace (flags
    ["truncated"]): that time is not recorded, neither a state nor a worker's idle time."""
    if not (getattr(exp.definitions, "flags", None) or {}).get("truncated"):
        return []
    from popview.analysis.report.nodes import format_seconds
    from popview.analysis.report.warnings import records_end
    end = records_end(exp)
    if not 0 < end < t1 or t1 <= t0:
        return []
    after = (t1 - max(end, t0)) / (t1 - t0)
    return [f"the trace is truncated: no record after {format_seconds(end / 1e9)}, "
            f"{after:.0%} of this window"]


def _unrecorded(time: np.ndarray, t0: int, t1: int) -> list[str]:
    """A note when the states recorded leave part of the locations' time uncovered: Extrae's
    OpenMP workers record nothing while they wait (the timeline draws that time as its own
    idle state), and the rows of heat 1x2 added up to 93 % of the threads' time, unexplained."""
    span = float(t1 - t0) * time.shape[0]
    share = 1.0 - float(time.sum()) / span if span > 0 else 0.0
    if share < 0.005:
        return []
    return [f"{share:.0%} of the threads' time in this window has no state record: "
            "the rows add up to less than the window"]


def region_table(exp, paradigm: str, t0: int, t1: int) -> Table:
    """Per region of `paradigm` and location: time inside, visits, average duration.
    Time counts the whole visit (inclusive), clipped to the window. A thread inside a
    construct its master entered (an OpenMP worker's outlined function below the
    master's parallel region) is inside it for its own visit (see _entries)."""
    defs = exp.definitions
    region = np.asarray(defs.callpath_region, np.int64)
    wanted = np.array([r.paradigm == paradigm for r in defs.regions], bool)
    if not len(region) or not wanted[region].any():
        raise NotAvailable(f"no {'MPI' if paradigm == 'mpi' else 'OpenMP'} regions in this experiment")
    ids = np.flatnonzero(wanted)
    n_loc = len(defs.locations)
    time = np.zeros((n_loc, len(ids)))
    visits = np.zeros((n_loc, len(ids)))
    slot = np.full(len(defs.regions), -1, np.int64)
    slot[ids] = np.arange(len(ids))
    inherited = _inherited(defs, wanted)
    for loc in range(n_loc):
        col, begin, end = _entries(exp, loc, t0, t1, slot, inherited)
        time[loc] = np.bincount(col, weights=_clipped(begin, end, t0, t1), minlength=len(ids))
        visits[loc] = np.bincount(col, minlength=len(ids))
    used = visits.sum(axis=0) > 0
    if not used.any():
        raise NotAvailable(f"no {'MPI calls' if paradigm == 'mpi' else 'OpenMP constructs'} in this window")
    ids, time, visits = ids[used], time[:, used], visits[:, used]
    name = "MPI call" if paradigm == "mpi" else "OpenMP construct"
    return Table(paradigm, f"{name} × location", _locations(exp), [defs.regions[i].name for i in ids],
                 {"time": time, "count": visits, "average duration": _ratio(time, visits),
                  "% time": time / (t1 - t0) * 100},
                 {"time": "ns", "count": "", "average duration": "ns", "% time": "%"}, t0, t1, ids, np.arange(n_loc))


def _inherited(defs, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR (offsets, regions) per call path: the regions of its strict ancestors that are `wanted`."""
    parent = np.asarray(defs.callpath_parent, np.int64)
    region = np.asarray(defs.callpath_region, np.int64)
    cps, regs = [], []
    cp = np.arange(len(parent))
    up = parent.copy()
    while len(cp):
        keep = up >= 0
        cp, up = cp[keep], up[keep]
        hit = wanted[region[up]]
        cps.append(cp[hit])
        regs.append(region[up[hit]])
        up = parent[up]
    cps = np.concatenate(cps) if cps else np.zeros(0, np.int64)
    regs = np.concatenate(regs) if regs else np.zeros(0, np.int64)
    order = np.argsort(cps, kind="stable")
    offsets = np.zeros(len(parent) + 1, np.int64)
    np.cumsum(np.bincount(cps, minlength=len(parent)), out=offsets[1:])
    return offsets, regs[order]


def _entries(exp, loc: int, t0: int, t1: int, slot: np.ndarray, inherited) -> tuple[np.ndarray, ...]:
    """(column, begin, end) of a location's time in the table's regions: its visits of them,
    and its outermost visits once more for each wanted region above them in the call path,
    which the location itself did not enter (its master did)."""
    c = exp.reader.read("calls", [loc], t0, t1, columns=["begin", "end", "callpath"])
    cp = np.asarray(c["callpath"], np.int64)
    if not len(cp):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    region = np.asarray(exp.definitions.callpath_region, np.int64)
    own = slot[region[cp]]
    outer = np.ones(len(cp), bool)
    outer[1:] = c["begin"][1:] >= np.maximum.accumulate(c["end"])[:-1]
    offsets, regs = inherited
    rows = np.flatnonzero(outer)
    count = offsets[cp[rows] + 1] - offsets[cp[rows]]
    rows = np.repeat(rows, count)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count)
    extra = slot[regs[offsets[cp[rows]] + within]]
    col = np.concatenate((own, extra))
    begin = np.concatenate((c["begin"], c["begin"][rows]))
    end = np.concatenate((c["end"], c["end"][rows]))
    ok = col >= 0
    return col[ok], begin[ok], end[ok]


def _useful_bursts(exp, loc: int, t0: int, t1: int):
    st = exp.reader.read("states", [loc], t0, t1, columns=["begin", "end", "state"])
    run = st["state"] == RUNNING
    return st["begin"][run], st["end"][run]


def duration_edges(exp, t0: int, t1: int, bins: int) -> np.ndarray:
    """Logarithmic duration bins (ns) spanning the useful bursts of the window."""
    lo, hi = np.inf, 0.0
    for loc in range(len(exp.definitions.locations)):
        b, e = _useful_bursts(exp, loc, t0, t1)
        d = (e - b)[e > b]
        if len(d):
            lo, hi = min(lo, float(d.min())), max(hi, float(d.max()))
    if hi <= 0:
        raise NotAvailable("no useful computation bursts in this window")
    lo = max(lo, 1.0)
    return np.geomspace(lo, hi * (1 + 1e-9) if hi > lo else lo * 2, bins + 1)


def useful_histogram(exp, t0: int, t1: int, bins: int) -> Table:
    """Bursts of useful computation per location and duration bin (count and time).
    A burst counts in full where it begins or ends inside the window."""
    edges = duration_edges(exp, t0, t1, bins)
    n_loc = len(exp.definitions.locations)
    count = np.zeros((n_loc, bins))
    time = np.zeros((n_loc, bins))
    for loc in range(n_loc):
        b, e = _useful_bursts(exp, loc, t0, t1)
        d = (e - b).astype(np.float64)
        col = np.clip(np.searchsorted(edges, d, side="right") - 1, 0, bins - 1)
        ok = d > 0
        count[loc] = np.bincount(col[ok], minlength=bins)
        time[loc] = np.bincount(col[ok], weights=d[ok], minlength=bins)
    return Table("useful", KINDS["useful"], _locations(exp), [_bin_label(edges, i) for i in range(bins)],
                 {"bursts": count, "time": time}, {"bursts": "", "time": "ns"}, t0, t1, edges, np.arange(n_loc))


def burst_ipc(exp, loc: int, begin: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """IPC of each burst: instructions / cycles read in (begin, end] (counter values are
    counts since the previous reading on the location)."""
    ins_code = exp.definitions.counter_code("PAPI_TOT_INS")
    cyc_code = exp.definitions.counter_code("PAPI_TOT_CYC")
    if ins_code is None or cyc_code is None:
        return None
    ev = exp.reader.read("events", [loc], int(begin.min()) if len(begin) else 0,
                         int(end.max()) + 1 if len(end) else 1, columns=["time", "type", "value"])
    out = []
    for code in (ins_code, cyc_code):
        sel = ev["type"] == code
        t, v = ev["time"][sel], exp.definitions.event_types[code].decode(ev["value"][sel])
        cum = np.r_[0.0, np.cumsum(v)]
        out.append(cum[np.searchsorted(t, end, side="right")] - cum[np.searchsorted(t, begin, side="right")])
    ins, cyc = out
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(cyc > 0, ins / cyc, np.nan)


def duration_ipc_histogram(exp, t0: int, t1: int, bins: int) -> Table:
    """Useful bursts by IPC (rows, linear bins) and duration (columns, logarithmic bins)."""
    edges = duration_edges(exp, t0, t1, bins)
    durations, ipcs = [], []
    for loc in range(len(exp.definitions.locations)):
        b, e = _useful_bursts(exp, loc, t0, t1)
        if not len(b):
            continue
        ipc = burst_ipc(exp, loc, b, e)
        if ipc is None:
            raise NotAvailable("needs the PAPI_TOT_INS and PAPI_TOT_CYC counters")
        durations.append((e - b).astype(np.float64))
        ipcs.append(ipc)
    d, ipc = np.concatenate(durations), np.concatenate(ipcs)
    ok = np.isfinite(ipc) & (d > 0)
    if not ok.any():
        raise NotAvailable("no useful burst has counter readings")
    d, ipc = d[ok], ipc[ok]
    ipc_edges = np.linspace(0.0, float(np.floor(ipc.max() * 4) + 1) / 4, bins + 1)   # top above the maximum
    col = np.clip(np.searchsorted(edges, d, side="right") - 1, 0, bins - 1)
    row = np.clip(np.searchsorted(ipc_edges, ipc, side="right") - 1, 0, bins - 1)
    count = np.zeros((bins, bins))
    time = np.zeros((bins, bins))
    np.add.at(count, (row, col), 1)
    np.add.at(time, (row, col), d)
    rows = [f"IPC {ipc_edges[i]:.2f}-{ipc_edges[i + 1]:.2f}" for i in range(bins)]
    return Table("duration_ipc", KINDS["duration_ipc"], rows, [_bin_label(edges, i) for i in range(bins)],
                 {"bursts": count, "time": time}, {"bursts": "", "time": "ns"}, t0, t1, edges, ipc_edges)


def cell_intervals(exp, table: Table, row: int, col: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(loc, begin, end) of the records behind one cell, for highlighting."""
    t0, t1 = table.t0, table.t1
    if table.kind == "states":
        st = exp.reader.read("states", [row], t0, t1, columns=["begin", "end", "state"])
        sel = st["state"] == table.col_keys[col]
        return np.full(sel.sum(), row), st["begin"][sel], st["end"][sel]
    if table.kind in ("mpi", "openmp"):
        defs = exp.definitions
        wanted = np.zeros(len(defs.regions), bool)
        wanted[table.col_keys[col]] = True
        slot = np.where(wanted, 0, -1)
        _, begin, end = _entries(exp, row, t0, t1, slot, _inherited(defs, wanted))
        order = np.argsort(begin, kind="stable")
        return np.full(len(begin), row), begin[order], end[order]
    lo, hi = table.col_keys[col], table.col_keys[col + 1]
    locs = [row] if table.kind == "useful" else range(len(exp.definitions.locations))
    out = ([], [], [])
    for loc in locs:
        b, e = _useful_bursts(exp, loc, t0, t1)
        d = (e - b).astype(np.float64)
        sel = (d >= lo) & ((d < hi) | (col == len(table.col_keys) - 2))
        if table.kind == "duration_ipc" and sel.any():
            ipc = burst_ipc(exp, loc, b, e)
            r0, r1 = table.row_keys[row], table.row_keys[row + 1]
            sel &= (ipc >= r0) & ((ipc < r1) | (row == len(table.row_keys) - 2))
        out[0].append(np.full(sel.sum(), loc))
        out[1].append(b[sel])
        out[2].append(e[sel])
    return tuple(np.concatenate(p) if p else np.zeros(0, np.int64) for p in out)


def write_csv(table: Table, stat: str, f) -> None:
    """The table of one statistic as CSV: a header row, one row per table row, a Total row."""
    w = csv.writer(f)
    unit = table.units.get(stat, "")
    w.writerow([f"{table.title} [{table.t0}-{table.t1} ns]: {stat}" + (f" ({unit})" if unit else "")]
               + table.col_labels)
    values = table.stats[stat]
    for label, row in zip(table.row_labels, values):
        w.writerow([label] + ["" if not np.isfinite(v) else _number(v) for v in row])
    if stat not in ("average duration", "average burst"):
        w.writerow(["Total"] + [_number(v) for v in table.totals(stat)])


def _number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6g}"


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def _bin_label(edges: np.ndarray, i: int) -> str:
    return f"{_short_time(edges[i])}-{_short_time(edges[i + 1])}"


def _short_time(ns: float) -> str:
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"
