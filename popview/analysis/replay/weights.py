"""What a segment of a location's timeline weighs on each clock of the replay.

Every state row first gets the kind of time the metric inputs give it
(popview.cache.cumulative: the row's state class and the calls open at its
midpoint on its location), so the replay and the models count alike:
MPI time is a non-useful row inside an MPI call, or an MPI-class state
outside OpenMP; OpenMP runtime is an OpenMP-class state, an MPI-class
state inside an OpenMP construct (Extrae writes state 5 "Synchronization"
for OpenMP barriers too), or idle time inside a construct or on a worker.

CUE: only useful computation weighs. COO: everything but OpenMP runtime
and idle time. COM: everything but MPI outside OpenMP (seed 001, the
hybrid additive model: MPI inside OpenMP is OpenMP's loss): a row inside
an OpenMP construct always weighs; outside, MPI time and idle time weigh
nothing. IDEAL: everything but MPI time and the idle time of worker
threads (a worker idles while its master is in MPI or serial code; its
clock is the master's at the next fork anyway): the ideal network of
METRICS.md's R_ideal, where useful work, OpenMP runtime, I/O, a master's
idle or not-created time and tracer overhead keep their measured length.
The IDEAL-weighted time of a master is what the models count outside MPI.

The focus of analysis restricts every weight to its time: a window to
[t0, t1), a call path to the visits of that call path by the process's
master thread, which then hold for all threads of the process.

The Dimemas-compatible model weighs on CUE and IDEAL what Dimemas replays
as CPU bursts instead: useful computation, I/O, and the "Not created" time
before a thread starts (prv2dim turns it into a burst); "Others"
(Extrae's own overhead) and MPI cost nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.gather import iteration_window, main_locations
from popview.analysis.replay import intervals
from popview.analysis.replay.records import Calls
from popview.cache import schema
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


def focus_mask(exp, focus: Focus, calls: Calls) -> Mask:
    defs = exp.definitions
    n_loc = defs.n_locations
    if focus.kind == "whole":
        return Mask(None, None, None, int(defs.t_end), 0, int(defs.t_end))
    if focus.kind == "window":
        ptr = np.arange(n_loc + 1, dtype=np.int64)
        return Mask(ptr, np.full(n_loc, focus.t0, np.int64), np.full(n_loc, focus.t1, np.int64),
                    int(focus.t1 - focus.t0), int(focus.t0), int(focus.t1), is_window=True)
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
    return Mask(t.ptr, t.begin, t.end, t.runtime_ns, 0, int(exp.definitions.t_end))


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
    weight = row_weights(exp, calls, st, ptr, bursts)
    ptr, begin, end, weight = _masters_uncovered_time(defs, ptr, st["begin"], st["end"], weight, bursts)
    st = {"begin": begin, "end": end}
    if mask.ptr is None:
        return ptr, st["begin"], st["end"], weight
    ptr, b, e, ia, _ = intervals.intersect(ptr, st["begin"], st["end"], mask.ptr, mask.begin, mask.end)
    return ptr, b, e, weight[ia]


def row_weights(exp, calls: Calls, st, ptr, bursts: bool = False) -> np.ndarray:
    """weight[row, kind] (0 or 1) of state rows in CSR order by location."""
    defs = exp.definitions
    code = st["state"]
    n_codes = int(code.max()) + 1 if len(code) else 1
    known = (code >= 0) & (code < n_codes)
    cls = np.where(known, class_lookup(defs.states, n_codes)[np.clip(code, 0, n_codes - 1)], int(StateClass.IDLE))
    useful = cls == StateClass.USEFUL
    idle = cls == StateClass.IDLE
    mid = st["begin"] + (st["end"] - st["begin"]) // 2
    in_omp = _inside_any(exp, calls, ptr, mid, lambda r: r.paradigm == "openmp" or r.role == "outlined")
    in_mpi = _inside_any(exp, calls, ptr, mid, lambda r: r.paradigm == "mpi")
    worker = np.ones(defs.n_locations, bool)
    worker[masters(defs)] = False
    worker = np.repeat(worker, np.diff(ptr))
    mpi_time = (~useful & in_mpi) | ((cls == StateClass.MPI) & ~in_omp)
    omp_runtime = ~mpi_time & ((cls == StateClass.OPENMP) | ((cls == StateClass.MPI) & in_omp)
                               | (idle & (in_omp | worker)))
    weight = np.empty((len(code), N_WEIGHTS), np.int8)
    weight[:, CUE] = useful
    weight[:, COO] = ~(omp_runtime | idle)
    weight[:, COM] = in_omp | ~(mpi_time | idle)
    weight[:, IDEAL] = ~(mpi_time | (idle & worker))
    if bursts:
        burst = useful | (cls == StateClass.IO) | (code == NOT_CREATED)
        weight[:, CUE] = burst
        weight[:, IDEAL] = burst
    return weight


def _masters_uncovered_time(defs, ptr, begin, end, weight, bursts: bool):
    """Rows added where no state covers the timeline of a master of the main
    application in [0, t_end] (a chopped trace, a reader that starts a
    location at its first event): the models count that time outside MPI,
    so it weighs on IDEAL (on nothing else, nor in the Dimemas-compatible
    model, which only replays bursts)."""
    is_master = np.zeros(defs.n_locations, bool)
    is_master[masters(defs)] = True
    is_master[~np.isin(np.arange(defs.n_locations), main_locations(defs)[0])] = False
    if bursts or not _has_gaps(ptr, begin, end, is_master, int(defs.t_end)):
        return ptr, begin, end, weight
    ptr, begin, end, source = intervals.with_gaps(ptr, begin, end, is_master, int(defs.t_end))
    filled = weight[np.maximum(source, 0)]
    filled[source < 0] = 0
    filled[source < 0, IDEAL] = 1
    return ptr, begin, end, filled


def _has_gaps(ptr, begin, end, is_master, t_end: int) -> bool:
    for loc in np.flatnonzero(is_master):
        lo, hi = ptr[loc], ptr[loc + 1]
        if hi == lo or begin[lo] > 0 or end[hi - 1] < t_end or bool((begin[lo + 1:hi] > end[lo:hi - 1]).any()):
            return True
    return False


def _inside_any(exp, calls: Calls, ptr, mid, wanted) -> np.ndarray:
    cps = _callpaths(exp.definitions, wanted)
    return _inside_calls(calls, cps, ptr, mid) if cps else np.zeros(len(mid), bool)


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
