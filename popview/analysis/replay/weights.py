"""What a segment of a location's timeline weighs on each critical path.

CUE: only useful computation weighs. COO: everything but OpenMP runtime
(and idle) time. COM: everything but MPI outside OpenMP, the time the
hybrid models charge to the MPI level (seed 001: "MPI inside OpenMP is
treated as a bottleneck by OpenMP"): a state row inside an OpenMP region
of its location (paradigm "openmp" or an outlined function, judged by the
row's midpoint, as popview.cache.cumulative does) always weighs; outside
them MPI states, idle time, and whatever else lies inside an MPI call
(MPI_Init's "Others", MPI-IO's I/O) weigh nothing. A master's COM time
thus covers all the additive model's non-MPI time (openmp + serial
useful), so the ideal MPI time derived from it stays within [0, mpi]. The focus of
analysis restricts every weight to its time: a window to [t0, t1), a call
path to the visits of that call path by the process's master thread, which
then hold for all threads of the process.

The Dimemas-compatible model weighs on CUE what Dimemas replays as CPU
bursts instead: useful computation, I/O, and the "Not created" time before
a thread starts (prv2dim turns it into a burst); "Others" (Extrae's own
overhead) and MPI cost nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.replay import intervals
from popview.analysis.replay.records import Calls
from popview.cache import schema
from popview.model.states import NOT_CREATED, StateClass, class_lookup

CUE, COO, COM = range(3)
_ZERO = {CUE: set(StateClass) - {StateClass.USEFUL},
         COO: {StateClass.OPENMP, StateClass.IDLE},
         COM: {StateClass.MPI, StateClass.IDLE}}


def class_weights() -> np.ndarray:
    """[class, weight kind] -> 0 or 1."""
    w = np.ones((len(StateClass), 3), np.int8)
    for kind, zero in _ZERO.items():
        for c in zero:
            w[int(c), kind] = 0
    return w


@dataclass
class Mask:
    """Per-location intervals the focus keeps (None: everything)."""

    ptr: np.ndarray | None
    begin: np.ndarray | None
    end: np.ndarray | None
    runtime_ns: int
    t_start: int
    t_stop: int
    is_window: bool = False


def focus_mask(exp, focus: Focus, calls: Calls) -> Mask:
    defs = exp.definitions
    n_loc = defs.n_locations
    if focus.kind == "whole":
        return Mask(None, None, None, int(defs.t_end), 0, int(defs.t_end))
    if focus.kind == "window":
        ptr = np.arange(n_loc + 1, dtype=np.int64)
        return Mask(ptr, np.full(n_loc, focus.t0, np.int64), np.full(n_loc, focus.t1, np.int64),
                    int(focus.t1 - focus.t0), int(focus.t0), int(focus.t1), is_window=True)
    if focus.kind in ("callpath", "iterations"):
        return _callpath_mask(exp, focus, calls)
    raise ValueError(f"the replay needs a resolved focus (whole, window, callpath, iterations), not {focus.kind!r}")


def _callpath_mask(exp, focus: Focus, calls: Calls) -> Mask:
    defs = exp.definitions
    cps = [cp for cp in range(len(defs.callpath_parent)) if defs.callpath_name(cp) == focus.callpath]
    if not cps:
        raise ValueError(f"no call path {focus.callpath!r} in {exp.source}")
    calls = calls.select(cps)
    proc = defs.location_process()
    per_process = {}
    for p, m in enumerate(masters(defs)):
        lo, hi = np.searchsorted(calls["loc"], [m, m + 1])
        b, e = calls["begin"][lo:hi], calls["end"][lo:hi]
        if focus.kind == "iterations" and len(b):
            first, last = max(focus.first, 1) - 1, min(focus.last, len(b)) - 1
            b, e = (b[first:first + 1], e[last:last + 1]) if last >= first else (b[:0], e[:0])
        ptr, mb, me = intervals.merge_overlaps(np.array([0, len(b)], np.int64), b, e)
        per_process[p] = (mb, me)
    runtime = max((int((e - b).sum()) for b, e in per_process.values()), default=0)
    empty = np.zeros(0, np.int64)
    parts = [per_process.get(int(proc[loc]), (empty, empty)) for loc in range(defs.n_locations)]
    counts = np.array([len(b) for b, _ in parts], np.int64)
    ptr = np.zeros(defs.n_locations + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    begin = np.concatenate([b for b, _ in parts]) if parts else empty
    end = np.concatenate([e for _, e in parts]) if parts else empty
    return Mask(ptr, begin, end, runtime, 0, int(defs.t_end))


def masters(defs) -> np.ndarray:
    """Location of each process's master thread (its lowest thread number)."""
    best: dict[int, int] = {}
    for i, loc in enumerate(defs.locations):
        if loc.kind == "thread":
            j = best.get(loc.process)
            if j is None or loc.thread < defs.locations[j].thread:
                best[loc.process] = i
    return np.array([best.get(p, 0) for p in range(defs.n_processes)], np.int64)


def weighted_pieces(exp, mask: Mask, calls: Calls, bursts: bool = False):
    """States cut to the focus: (ptr, begin, end, weight[piece, kind]);
    `bursts`: CUE weighs Dimemas's CPU bursts (see the module doc)."""
    defs = exp.definitions
    st, ptr = _states(exp.reader, mask, defs.n_locations)
    code = st["state"]
    table, useful = _code_weights(defs, int(code.max()) + 1 if len(code) else 1, bursts)
    weight, open_com = _row_weights(code, table, useful)
    _mpi_outside_openmp(exp, calls, st, ptr, useful, weight, open_com)
    if mask.ptr is None:
        return ptr, st["begin"], st["end"], weight
    ptr, b, e, ia, _ = intervals.intersect(ptr, st["begin"], st["end"], mask.ptr, mask.begin, mask.end)
    return ptr, b, e, weight[ia]


def _code_weights(defs, n_codes: int, bursts: bool):
    """Weights per state code (last row: codes outside the table, i.e. no
    state), and whether each code is useful computation."""
    lookup = class_lookup(defs.states, n_codes)
    cls = np.r_[lookup[:n_codes], int(StateClass.IDLE)]
    table = class_weights()[cls]
    if bursts:
        code = np.r_[np.arange(n_codes), -1]
        table[:, CUE] = (cls == StateClass.USEFUL) | (cls == StateClass.IO) | (code == NOT_CREATED)
    return table, cls == StateClass.USEFUL


@numba.njit(cache=True)
def _row_weights(code, table, useful):
    """weight[row, kind] from each row's state code, and how many rows weigh
    on COM without being useful (the only ones an MPI call can zero)."""
    n_codes = len(table) - 1
    out = np.empty((len(code), table.shape[1]), np.int8)
    open_com = 0
    for i in range(len(code)):
        c = code[i] if 0 <= code[i] < n_codes else n_codes
        for k in range(table.shape[1]):
            out[i, k] = table[c, k]
        if table[c, COM] == 1 and not useful[c]:
            open_com += 1
    return out, open_com


def _mpi_outside_openmp(exp, calls: Calls, st, ptr, useful, weight, open_com: int) -> None:
    """COM weights of rows inside OpenMP regions (1) and inside MPI calls (0); see the module doc."""
    if len(weight) == 0:
        return
    omp = _callpaths(exp.definitions, lambda r: r.paradigm == "openmp" or r.role == "outlined")
    mpi = _callpaths(exp.definitions, lambda r: r.paradigm == "mpi") if open_com else []
    if not omp and not mpi:
        return
    mid = st["begin"] + (st["end"] - st["begin"]) // 2
    in_omp = _inside_calls(calls, omp, ptr, mid) if omp else np.zeros(len(mid), bool)
    weight[in_omp, COM] = 1
    if mpi:
        code = st["state"]
        maybe_mpi = (weight[:, COM] == 1) & ~useful[np.clip(code, -1, len(useful) - 2)] & ~in_omp
        weight[maybe_mpi & _inside_calls(calls, mpi, ptr, mid), COM] = 0


def _callpaths(defs, wanted) -> list[int]:
    return [cp for cp, r in enumerate(defs.callpath_region) if wanted(defs.regions[int(r)])]


def _inside_calls(calls: Calls, cps, ptr, mid) -> np.ndarray:
    """Whether each row's midpoint lies inside a visit of `cps` on the row's location."""
    c = calls.select(cps)
    c_ptr, c_b, c_e = intervals.merge_overlaps(intervals.csr(c["loc"], len(ptr) - 1), c["begin"], c["end"])
    return intervals.points_inside(ptr, mid, c_ptr, c_b, c_e)


def _states(reader, mask: Mask, n_loc: int):
    """The states the focus needs and their row pointers per location (from the
    cache's offsets when every row is read: no location column to decode)."""
    if not reader.has("states"):
        return schema.empty("states"), np.zeros(n_loc + 1, np.int64)
    if mask.is_window:
        st = reader.read("states", t0=mask.t_start, t1=mask.t_stop, columns=["loc", "begin", "end", "state"])
        return st, intervals.csr(st["loc"], n_loc)
    return reader.read("states", columns=["begin", "end", "state"]), reader.offsets("states").astype(np.int64)
