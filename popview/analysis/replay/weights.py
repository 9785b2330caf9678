"""What a segment of a location's timeline weighs on each clock of the replay.

Every state row weighs by the category the conversion gave it for the
metric inputs (popview.cache.cumulative, stored with each row in the
cumulative sums), so the replay and the models count the same rows as
useful, MPI, OpenMP runtime or idle: MPI time is a non-useful row inside
an MPI call, or an MPI-class state outside OpenMP; OpenMP runtime is an
OpenMP-class state, an MPI-class state inside OpenMP (Extrae writes state
5 "Synchronization" for OpenMP barriers too), or idle time inside OpenMP or
on a worker. Inside OpenMP: inside an OpenMP or outlined call, or inside a
parallel-region instance of the process (from the master's fork; past
the first 64 regions, which have no column of their own in the sums, a
worker's idle time and MPI calls in an instance weigh as outside). Earlier
the replay classified rows itself, from the calls open at each row's
midpoint only, and drifted from the inputs where a region began at the fork.

CUE: only useful computation weighs. COO: everything but OpenMP runtime
(a worker's idle time is OpenMP idle time; a master's idle or not-created
time weighs, as the other models count it at the process level). COM: everything but MPI outside OpenMP (seed 001, the
hybrid additive model: MPI inside OpenMP is OpenMP's loss): a row inside
a parallel-region instance always weighs; outside, MPI time and idle time weigh
nothing. IDEAL: everything but MPI time and the idle time of worker
threads (a worker idles while its master is in MPI or serial code; its
clock is the master's at the next fork anyway): the ideal network of
METRICS.md's R_ideal, where useful work, OpenMP runtime, I/O, a master's
idle or not-created time and tracer overhead keep their measured length.
The IDEAL-weighted time of a master is what the models count outside MPI.

The focus of analysis restricts every weight to its time: a window to
[t0, t1), a call path to each location's time in it as the metric inputs
count it (popview.analysis.callpath_time).

The Dimemas-compatible model weighs on CUE and IDEAL what Dimemas replays
as CPU bursts instead: useful computation, I/O, and the "Not created" time
before a thread starts (prv2dim turns it into a burst); "Others"
(Extrae's own overhead) and MPI cost nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.gather import iteration_window, main_locations, run_window
from popview.analysis.inputs import MPI_CATS
from popview.analysis.replay import intervals
from popview.analysis.replay.records import Calls
from popview.cache import schema
from popview.model.categories import CAT
from popview.model.states import NOT_CREATED, StateClass, class_lookup

CUE, COO, COM, IDEAL = range(4)
N_WEIGHTS = 4


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
    extra: tuple | None = None      # (ptr, begin, end): part of the intervals where a master waits for its team


# a master inside a call-path focus only while its team is in it weighs as OpenMP idle time
_WAITING = np.array([0, 0, 1, 1], np.int8)      # CUE, COO, COM, IDEAL


def focus_mask(exp, focus: Focus, calls: Calls) -> Mask:
    defs = exp.definitions
    n_loc = defs.n_locations
    if focus.kind == "whole":
        return Mask(None, None, None, int(defs.t_end), 0, int(defs.t_end))
    if focus.kind == "window":
        ptr = np.arange(n_loc + 1, dtype=np.int64)
        (t0, t1), _ = run_window(focus.t0, focus.t1, defs.t_end)      # as the metric inputs cut it
        return Mask(ptr, np.full(n_loc, t0, np.int64), np.full(n_loc, t1, np.int64),
                    int(t1 - t0), int(t0), int(t1), is_window=True)
    if focus.kind == "iterations":          # the window the metric inputs use
        return focus_mask(exp, Focus.window(*iteration_window(exp, focus.callpath, focus.first, focus.last)), calls)
    if focus.kind == "callpath":
        return _callpath_mask(exp, focus, calls)
    raise ValueError(f"the replay needs a resolved focus (whole, window, callpath, iterations), not {focus.kind!r}")


def _callpath_mask(exp, focus: Focus, calls: Calls) -> Mask:
    """Each location's time in the call path as the metric inputs count it."""
    from popview.analysis.callpath_time import callpath_time
    every = calls.all()
    ptr = intervals.csr(every["loc"], exp.definitions.n_locations)
    t = callpath_time(exp, focus.callpath,
                      lambda loc: {k: every[k][ptr[loc]:ptr[loc + 1]] for k in ("begin", "end", "callpath")})
    return Mask(t.ptr, t.begin, t.end, t.runtime_ns, 0, int(exp.definitions.t_end),
                extra=(t.extra_ptr, t.extra_begin, t.extra_end) if t.extra_ptr is not None else None)


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
    `bursts`: CUE and IDEAL weigh Dimemas's CPU bursts (see the module doc)."""
    defs = exp.definitions
    st, ptr = _states(exp.reader, mask, defs.n_locations)
    weight = row_weights(defs, st, ptr, bursts)
    ptr, begin, end, weight = _masters_uncovered_time(defs, ptr, st["begin"], st["end"], weight, bursts)
    st = {"begin": begin, "end": end}
    if mask.ptr is None:
        return ptr, st["begin"], st["end"], weight
    ptr, b, e, ia, _ = intervals.intersect(ptr, st["begin"], st["end"], mask.ptr, mask.begin, mask.end)
    weight = weight[ia]
    if mask.extra is None or not len(mask.extra[1]):
        return ptr, b, e, weight
    # where a master is in the focus only while its team is (callpath_time), it weighs as the
    # metric inputs count it: OpenMP idle time of the call path, never its own computation or MPI
    n_loc = len(ptr) - 1
    xptr, xb, xe, _, _ = intervals.intersect(ptr, b, e, *mask.extra)
    rptr, rb, re_, ri = intervals.subtract(ptr, b, e, *mask.extra)
    loc = np.concatenate((np.repeat(np.arange(n_loc), np.diff(rptr)), np.repeat(np.arange(n_loc), np.diff(xptr))))
    begin = np.concatenate((rb, xb))
    order = np.lexsort((begin, loc))
    w = np.concatenate((weight[ri], np.broadcast_to(_WAITING, (len(xb), N_WEIGHTS))))
    return intervals.csr(loc[order], n_loc), begin[order], np.concatenate((re_, xe))[order], w[order]


_MPI = [CAT[c] for c in MPI_CATS]
_OPENMP_RUNTIME = [CAT["omp_sync"], CAT["omp_management"], CAT["omp_idle"]]


def row_weights(defs, st, ptr, bursts: bool = False) -> np.ndarray:
    """weight[row, kind] (0 or 1) of state rows in CSR order by location, from the category
    and parallel-region instance the conversion gave each row (`cat`, `region`: the cache's
    cumulative sums), the one classification the metric inputs use too."""
    cat, in_region = st["cat"], st["region"] >= 0
    useful = cat <= CAT["comp_parallel"]
    mpi_time = np.isin(cat, _MPI)
    omp_runtime = np.isin(cat, _OPENMP_RUNTIME)
    idle = cat == CAT["idle"]                   # a master idle outside OpenMP
    worker = np.ones(defs.n_locations, bool)
    worker[masters(defs)] = False
    idle_worker = (cat == CAT["omp_idle"]) & np.repeat(worker, np.diff(ptr))
    weight = np.empty((len(cat), N_WEIGHTS), np.int8)
    weight[:, CUE] = useful
    weight[:, COO] = ~omp_runtime                # a master's idle time is not OpenMP's (seed 000 2.1.4)
    weight[:, COM] = in_region | ~(mpi_time | idle | idle_worker)
    weight[:, IDEAL] = ~(mpi_time | idle_worker)
    if bursts:
        burst = useful | _io_state(defs, st["state"]) | (st["state"] == NOT_CREATED)
        weight[:, CUE] = burst
        weight[:, IDEAL] = burst
    return weight


def _io_state(defs, state: np.ndarray) -> np.ndarray:
    """Rows in an I/O state, by the state's class: Dimemas replays every I/O state as a burst,
    the tracer's flushes too, which the sums' categories count as measurement overhead
    (`other`), not the program's file I/O (EPOCH's ideal runtime moved 2.4 ms when the replay
    took the category)."""
    table = class_lookup(defs.states, 64)
    return table[np.clip(state, 0, len(table) - 1)] == StateClass.IO


def _masters_uncovered_time(defs, ptr, begin, end, weight, bursts: bool):
    """Rows added where no state covers the timeline of a master of the main
    application in [0, t_end] (a chopped trace, a reader that starts a
    location at its first event): the models count that time outside MPI,
    so it weighs on IDEAL, and on COO (it is no OpenMP runtime: with it
    weighing nothing, a pure MPI chopped trace read an OpenMP transfer
    efficiency of 96 %); on nothing else, nor in the Dimemas-compatible
    model, which only replays bursts."""
    is_master = np.zeros(defs.n_locations, bool)
    is_master[masters(defs)] = True
    is_master[~np.isin(np.arange(defs.n_locations), main_locations(defs)[0])] = False
    if bursts or not _has_gaps(ptr, begin, end, is_master, int(defs.t_end)):
        return ptr, begin, end, weight
    ptr, begin, end, source = intervals.with_gaps(ptr, begin, end, is_master, int(defs.t_end))
    filled = weight[np.maximum(source, 0)]
    filled[source < 0] = 0
    filled[source < 0, IDEAL] = 1
    filled[source < 0, COO] = 1             # nor is it OpenMP runtime
    return ptr, begin, end, filled


def _has_gaps(ptr, begin, end, is_master, t_end: int) -> bool:
    for loc in np.flatnonzero(is_master):
        lo, hi = ptr[loc], ptr[loc + 1]
        if hi == lo or begin[lo] > 0 or end[hi - 1] < t_end or bool((begin[lo + 1:hi] > end[lo:hi - 1]).any()):
            return True
    return False


def _states(reader, mask: Mask, n_loc: int):
    """The state rows the focus needs (begin, end, state code, and the category and region
    the cache's cumulative sums give each) and their row pointers per location."""
    if not reader.has("states"):
        return _no_states(), np.zeros(n_loc + 1, np.int64)
    states, kind = reader.group("states"), _kind_column(reader)
    if not mask.is_window:
        st = reader.read("states", columns=["begin", "end", "state"])
        st.update(_row_kinds(kind[:]))
        return st, reader.offsets("states").astype(np.int64)
    parts, counts = [], np.zeros(n_loc, np.int64)
    for loc in range(n_loc):
        lo, hi = reader.row_range("states", loc, mask.t_start, mask.t_stop)
        if hi <= lo:
            continue
        begin, end = states["begin"][lo:hi], states["end"][lo:hi]
        keep = (begin < mask.t_stop) & (end > mask.t_start)
        parts.append({"begin": begin[keep], "end": end[keep], "state": states["state"][lo:hi][keep],
                      **_row_kinds(kind[lo:hi][keep])})
        counts[loc] = int(keep.sum())
    st = {k: np.concatenate([p[k] for p in parts]) for k in ("begin", "end", "state", "cat", "region")} if parts \
        else _no_states()
    ptr = np.zeros(n_loc + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return st, ptr


class _WordColumn:
    """seg's word column (rows sliced as kind[lo:hi]), for caches converted before `kind`."""

    def __init__(self, seg):
        self.seg = seg

    def __getitem__(self, rows: slice) -> np.ndarray:
        return self.seg[rows, 1]


def _kind_column(reader):
    """Each state row's category and region, as `_row_kinds` reads them: the cache's `kind`
    (cumulative.py), or the word column of `seg` in a cache converted before it (where the
    rows are in the cache itself: never a build of the window sums)."""
    g = reader.group("cumulative")
    if "kind" in g:
        return g["kind"]
    return _WordColumn(reader.window_sums()["seg"])


def _no_states() -> dict[str, np.ndarray]:
    empty = schema.empty("states")
    return {"begin": empty["begin"], "end": empty["end"], "state": empty["state"],
            "cat": np.zeros(0, np.int64), "region": np.zeros(0, np.int64)}


def _row_kinds(word: np.ndarray) -> dict[str, np.ndarray]:
    """Category and parallel-region column (-1: none) of `seg` rows (popview.cache.cumulative)."""
    word = np.asarray(word, np.int64)
    return {"cat": word & 255, "region": ((word >> 8) & 255) - 1}
