"""The time of each location inside a call path, as the cache's profile counts it.

A thread's time goes to its process master's innermost call path at that
moment (a parallel-region instance begins at its fork), or, where the reader
grafted the thread's own visits below the master's (OTF2), to the thread's
own innermost call path. A call-path focus keeps exactly that time on every
location, so the metric inputs (the profile's sums) and the replay (these
intervals) measure the same thing.

R of a call-path focus is the longest, over processes, of the time some
thread of the process is inside the call path: the master's time when the
workers' time lies within it (always unless the reader grafted them), and
never shorter than any thread's, so that no chain of dependencies between
the threads of a process (the replay's critical path) can outlast it.

Where a worker is inside the call path while its master, in the same
parallel-region instance (fork to join), is not (an outlined function or a
loop of a region: Extrae's workers run their chunk after the master has
finished its own and waits in the join; a barrier the master reaches last),
that time of the master belongs to the focus too (`extra`): the process is
inside the parallel region there, and its master, idle with respect to the
call path, is OpenMP time of it (its OpenMP runtime states as they are,
anything else as OpenMP idle: the master's own computation elsewhere in the
region is not the call path's), not time its process spends elsewhere, which
the MPI level would count lost.
"""
from __future__ import annotations

import os
from functools import partial
from dataclasses import dataclass

import numpy as np

from popview.analysis.computed_once import ComputedOnce
from popview.analysis.replay import intervals
from popview.cache.cumulative import _innermost, _uncovered
from popview.jit import njit

# per cache file (as written), fingerprint and call path: the metric trees of every model (each opening
# the experiment afresh) and the replay's mask share one computation
_CACHE = ComputedOnce(8)


@dataclass
class CallpathTime:
    """Per location, disjoint sorted intervals in CSR form; R in ns. `extra_*`: the part
    of each master's intervals outside its own visits of the call path (its team inside
    them in the same parallel-region instance), which the trace's profile gives to the
    enclosing call path."""

    ptr: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    runtime_ns: int
    extra_ptr: np.ndarray | None = None
    extra_begin: np.ndarray | None = None
    extra_end: np.ndarray | None = None


def _target_and_subtree(exp, path: str) -> tuple[list[int], np.ndarray]:
    """The call paths named `path` and whether each call path lies inside them."""
    defs = exp.definitions
    target = callpath_ids(defs, path)
    if not target:
        from popview.analysis.gather import no_callpath
        raise no_callpath(exp.source, path, (defs.callpath_name(i) for i in range(len(defs.callpath_parent))))
    return target, subtree(defs.callpath_parent, target)


def callpath_ids(defs, path: str) -> list[int]:
    return [cp for cp in range(len(defs.callpath_parent)) if defs.callpath_name(cp) == path]


def callpath_time(exp, path: str, own_calls=None) -> CallpathTime:
    """The intervals of `path` per location; `own_calls(loc)` gives a location's visits
    (begin, end, callpath), read from the cache when not given (then computed once per
    cache file and call path, however many models ask)."""
    if own_calls is not None:
        return _callpath_time(exp, path, own_calls)
    st = os.stat(exp.cache_path)
    key = (str(exp.cache_path), st.st_mtime_ns, st.st_size, exp.reader.fingerprint, path)
    return _CACHE.get(key, lambda: _callpath_time(exp, path, None))


@dataclass
class CallpathExtent:
    """R in ns and the masters' waiting time of `callpath_time` (the metric tree's needs),
    without each location's intervals."""

    runtime_ns: int
    extra_ptr: np.ndarray
    extra_begin: np.ndarray
    extra_end: np.ndarray


def callpath_extent(exp, path: str) -> CallpathExtent:
    """`callpath_time`'s R and masters' waiting time, computed once per cache file and call path;
    the workers' visits read only where their master is not in the call path."""
    st = os.stat(exp.cache_path)
    key = (str(exp.cache_path), st.st_mtime_ns, st.st_size, exp.reader.fingerprint, path, "extent")
    return _CACHE.get(key, lambda: _callpath_extent(exp, path))


def clear_cache() -> None:
    _CACHE.clear()


def _callpath_time(exp, path: str, own_calls) -> CallpathTime:
    from popview.analysis.gather import main_locations
    from popview.analysis.replay.weights import masters
    defs = exp.definitions
    target, inside = _target_and_subtree(exp, path)
    grafted = bool(defs.flags.get("threads_grafted"))
    proc = defs.location_process()
    master_of = masters(defs)
    empty = np.zeros(0, np.int64)
    parts = [(empty, empty)] * defs.n_locations
    extra = [(empty, empty)] * defs.n_locations
    g = exp.reader.group("cumulative")["master_calls"]
    off = g["cp_offsets"][:]
    # a master's innermost segments inside the call path are its visits of the call path itself
    # (the rest of the subtree nests in them): only those rows are read
    own_time = _visits_by_process(g, off, target, defs.n_processes, nonempty=True)
    workers = [w for w in range(defs.n_locations) if grafted and w != master_of[proc[w]]]
    calls = own_calls or _cache_calls(exp.reader, workers)
    instances = _Instances(g, off, _constructs(defs), defs.n_processes) if workers else None
    for p in range(defs.n_processes):
        master_part = own_time[p]
        m = int(master_of[p])
        team = [int(loc) for loc in np.flatnonzero(proc == p) if loc != m]
        for loc in np.flatnonzero(proc == p):   # without grafted visits, a thread's time is its master's
            own = grafted and loc != m
            parts[loc] = _worker_part(calls(int(loc)), master_part, inside) if own else master_part
        if grafted and team:   # OpenMP workers only: a master waiting for its team
            extra[m] = _master_waiting(parts, m, team, partial(instances.of, p))
            if len(extra[m][0]):
                parts[m] = _union([parts[m], extra[m]])
    ptr = _ptr(parts, defs.n_locations)
    begin = np.concatenate([b for b, _ in parts]) if parts else empty
    end = np.concatenate([e for _, e in parts]) if parts else empty
    main = main_locations(defs)[0]
    runtime = max((_union_length(parts, main[proc[main] == p]) for p in np.unique(proc[main])), default=0)
    return CallpathTime(ptr, begin, end, runtime, _ptr(extra, defs.n_locations),
                        np.concatenate([b for b, _ in extra]) if extra else empty,
                        np.concatenate([e for _, e in extra]) if extra else empty)


GAPS = 64      # a process whose master leaves the call path more often: its workers' visits read whole


def _callpath_extent(exp, path: str) -> CallpathExtent:
    """R and the masters' waiting time as `_callpath_time` has them, from the workers' time in
    the call path outside their master's (`gaps`): a master's time in it is the union of its
    visits of the call path (M); a worker's is its own kept segments (S) and M outside its own
    visits, so the union of a process's threads is M and the workers' S outside M, and a
    master waits for its team in S outside M within its parallel-region instances. Only the
    workers' visits overlapping the gaps of M are read (there the stack of open visits is
    whole): the few rows before the master's first visit and after its last, when the call
    path is entered once per process."""
    from popview.analysis.gather import main_locations
    from popview.analysis.replay.weights import masters
    defs = exp.definitions
    target, inside = _target_and_subtree(exp, path)
    grafted = bool(defs.flags.get("threads_grafted"))
    proc, master_of = defs.location_process(), masters(defs)
    main = main_locations(defs)[0]
    g = exp.reader.group("cumulative")["master_calls"]
    off = g["cp_offsets"][:]
    own_time = _visits_by_process(g, off, target, defs.n_processes, nonempty=True)
    teams = {p: [int(loc) for loc in np.flatnonzero(proc == p) if loc != master_of[p]]
             for p in range(defs.n_processes)} if grafted else {}
    teams = {p: team for p, team in teams.items() if team}
    for p in teams:
        mine = main[proc[main] == p]
        if len(mine) and master_of[p] not in mine:      # the union without the master: as callpath_time has it
            t = callpath_time(exp, path)
            return CallpathExtent(t.runtime_ns, t.extra_ptr, t.extra_begin, t.extra_end)
    gaps = {p: _gaps(own_time[p]) for p in teams}
    outside = _outside(exp.reader, teams, inside, gaps)
    instances = None
    extra = [(_EMPTY, _EMPTY)] * defs.n_locations
    runtime = 0
    for p in range(defs.n_processes):
        m = int(master_of[p])
        mine = main[proc[main] == p]
        inner = (_EMPTY, _EMPTY)
        if p in teams:
            team_out = _union([outside[w] for w in teams[p]])
            if len(team_out[0]):
                instances = instances or _Instances(g, off, _constructs(defs), defs.n_processes)
                inst = instances.of(p)
                if len(inst[0]):
                    extra[m] = _intersect(team_out, inst)
            inner = _union([extra[m]] + [outside[int(w)] for w in mine if w != m])
        if len(mine):
            own = own_time[p]
            runtime = max(runtime, int((own[1] - own[0]).sum() + (inner[1] - inner[0]).sum()))
    return CallpathExtent(runtime, _ptr(extra, defs.n_locations),
                          np.concatenate([b for b, _ in extra] + [_EMPTY]), np.concatenate([e for _, e in extra] + [_EMPTY]))


_FAR = np.iinfo(np.int64).max // 4


def _gaps(visits) -> tuple[np.ndarray, np.ndarray]:
    """The complement of sorted, disjoint intervals (of positive length), its ends far away."""
    b, e = visits
    return np.concatenate(([-_FAR], e)), np.concatenate((b, [_FAR]))


def _outside(reader, teams: dict, inside, gaps: dict) -> dict:
    """Per worker of `teams` (process -> workers), its own kept segments (those of its innermost
    visits inside the call path) within its process's `gaps`: the rows that may overlap each gap
    (a slab of the calls table: every visit open in the gap is there, whole), read at once; all
    of a worker's rows where its process's gaps are many."""
    columns = ["begin", "end", "callpath"]
    if not reader.has("calls"):
        return {w: (_EMPTY, _EMPTY) for team in teams.values() for w in team}
    slabs = {}           # (worker, gap) -> rows [lo, hi)
    whole = [w for p, team in teams.items() if len(gaps[p][0]) > GAPS for w in team]
    whole_set = set(whole)
    for p, team in teams.items():
        if len(gaps[p][0]) > GAPS:
            continue
        for w in team:
            for k, (t0, t1) in enumerate(zip(*gaps[p])):
                lo, hi = reader.row_range("calls", w, None if t0 == -_FAR else int(t0), None if t1 == _FAR else int(t1))
                if hi > lo:
                    slabs[w, k] = lo, hi
    merged = _merged_ranges(list(slabs.values()))
    table = reader.group("calls")
    rows = {c: table[c].read_rows(merged) for c in columns} if merged else {}
    starts = np.array([lo for lo, _ in merged], np.int64)
    at = np.concatenate(([0], np.cumsum([hi - lo for lo, hi in merged]))).astype(np.int64)
    calls = _cache_calls(reader, whole) if whole else None
    out = {}
    for p, team in teams.items():
        for w in team:
            if w in whole_set:
                ob, oe, ocp = _innermost(calls(w))
                out[w] = _intersect(_joined(ob, oe, inside[ocp], _EMPTY, _EMPTY, _NONE), gaps[p])
                continue
            pieces = []
            for k, (t0, t1) in enumerate(zip(*gaps[p])):
                if (w, k) not in slabs:
                    continue
                lo, hi = slabs[w, k]
                i = int(np.searchsorted(starts, lo, side="right")) - 1
                a = int(at[i] + lo - starts[i])
                ob, oe, ocp = _innermost({c: rows[c][a:a + hi - lo] for c in columns})
                kept = _joined(ob, oe, inside[ocp], _EMPTY, _EMPTY, _NONE)
                pieces.append(_intersect(kept, (np.array([t0], np.int64), np.array([t1], np.int64))))
            out[w] = (np.concatenate([b for b, _ in pieces] + [_EMPTY]), np.concatenate([e for _, e in pieces] + [_EMPTY]))
    return out


def _merged_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Row ranges sorted, the overlapping and adjacent ones joined."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


def _visits_by_process(g, off, cps, n_processes: int, nonempty: bool = False) -> list:
    """Per process, the union of its master's visits of the call paths `cps` (the cumulative
    group's master_calls, stored by call path, process, begin): (begin, end), sorted,
    disjoint, touching ones joined; without the empty visits if `nonempty`."""
    ranges = [(int(off[c]), int(off[c + 1])) for c in cps if c + 1 < len(off) and off[c + 1] > off[c]]
    proc = np.concatenate([g["proc"][lo:hi] for lo, hi in ranges]) if ranges else np.zeros(0, np.int32)
    begin = np.concatenate([g["begin"][lo:hi] for lo, hi in ranges]).astype(np.int64, copy=False) if ranges \
        else np.zeros(0, np.int64)
    end = np.concatenate([g["end"][lo:hi] for lo, hi in ranges]).astype(np.int64, copy=False) if ranges \
        else np.zeros(0, np.int64)
    if nonempty:
        keep = end > begin
        proc, begin, end = proc[keep], begin[keep], end[keep]
    if len(ranges) > 1:     # each call path's rows are sorted by process, begin
        order = np.lexsort((begin, proc))
        proc, begin, end = proc[order], begin[order], end[order]
    ptr, b, e = intervals.merge_overlaps(intervals.csr(proc, n_processes), begin, end)
    return [(b[ptr[p]:ptr[p + 1]], e[ptr[p]:ptr[p + 1]]) for p in range(n_processes)]


def _ptr(parts, n_loc: int) -> np.ndarray:
    return intervals.csr(np.repeat(np.arange(n_loc), [len(b) for b, _ in parts]), n_loc)


def _constructs(defs) -> tuple[np.ndarray, np.ndarray]:
    """Per call path: whether it is an OpenMP parallel construct; whether an outlined function."""
    par = np.array([defs.regions[r].paradigm == "openmp" and defs.regions[r].role == "parallel"
                    for r in defs.callpath_region], bool)
    outl = np.array([defs.regions[r].role == "outlined" for r in defs.callpath_region], bool)
    return par, outl


class _Instances:
    """Per process, its master's outermost parallel-region instances (fork to join, as the
    cache stores them): the union of its visits of parallel constructs, of outlined
    functions where it has none; read when first asked for."""

    def __init__(self, g, off, construct, n_processes: int):
        self._g, self._off, self._construct, self._n = g, off, construct, n_processes
        self._by = None

    def of(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        if self._by is None:
            n_cp = len(self._off) - 1
            par, outl = (np.flatnonzero(c[:n_cp]) for c in self._construct)
            self._by = _visits_by_process(self._g, self._off, par, self._n)
            if any(not len(b) for b, _ in self._by):
                by_outl = _visits_by_process(self._g, self._off, outl, self._n)
                self._by = [own if len(own[0]) else o for own, o in zip(self._by, by_outl)]
        return self._by[p]


def _union(parts) -> tuple[np.ndarray, np.ndarray]:
    b = np.concatenate([x for x, _ in parts])
    e = np.concatenate([x for _, x in parts])
    order = np.argsort(b, kind="stable")
    return intervals.merge_overlaps(np.array([0, len(b)], np.int64), b[order], e[order])[1:]


def _intersect(a, b) -> tuple[np.ndarray, np.ndarray]:
    """a ∩ b of two sorted, disjoint interval lists."""
    _, ob, oe, _, _ = intervals.intersect(np.array([0, len(a[0])], np.int64), *a,
                                          np.array([0, len(b[0])], np.int64), *b)
    return ob, oe


def _master_waiting(parts, master: int, workers: list[int], waiting) -> tuple[np.ndarray, np.ndarray]:
    """The time in which some worker is inside the call path while the master is not,
    within one of the master's parallel-region instances (`waiting()` gives them):
    (begin, end), sorted, disjoint."""
    empty = np.zeros(0, np.int64)
    if not workers:
        return empty, empty
    team = _union([parts[w] for w in workers])
    own = parts[master]
    if len(team[0]) and len(own[0]):     # (team ∩ waiting) less own = (team less own) ∩ waiting
        _, b, e, _ = intervals.subtract(np.array([0, len(team[0])], np.int64), *team,
                                        np.array([0, len(own[0])], np.int64), *own)
        team = b, e
    if not len(team[0]):     # the team inside only where the master is: its instances not read
        return empty, empty
    inst = waiting()
    if not len(inst[0]):
        return empty, empty
    return _intersect(team, inst)


def _union_length(parts, locs) -> int:
    if not len(locs):
        return 0
    b = np.concatenate([parts[loc][0] for loc in locs])
    e = np.concatenate([parts[loc][1] for loc in locs])
    order = np.argsort(b, kind="stable")
    _, ub, ue = intervals.merge_overlaps(np.array([0, len(b)], np.int64), b[order], e[order])
    return int((ue - ub).sum())


def subtree(parent, roots) -> np.ndarray:
    """Whether each call path is one of `roots` or lies below one."""
    parent = np.asarray(parent, np.int64)
    inside = np.zeros(len(parent) + 1, bool)       # the last slot: "no parent"
    inside[list(roots)] = True
    while True:
        grown = inside[:-1] | inside[parent]
        if (grown == inside[:-1]).all():
            return inside[:-1]
        inside[:-1] = grown


_EMPTY, _NONE = np.zeros(0, np.int64), np.zeros(0, np.bool_)


def _worker_part(own: dict, master_part, inside) -> tuple[np.ndarray, np.ndarray]:
    """A grafted thread's time inside the call path: its own innermost visits' segments where
    it has some, its master's segments elsewhere (cumulative.thread_segments), kept where
    their call path lies inside: its own kept segments, and the master's time in the call
    path (`master_part`, the union of its kept segments) outside the thread's own visits."""
    ob, oe, ocp = _innermost(own)
    rb, re_, _ = _uncovered(*master_part, np.zeros(len(master_part[0]), np.int32), ob, oe)
    return _joined(ob, oe, inside[ocp], rb, re_, np.ones(len(rb), np.bool_))


@njit(cache=True, nogil=True)
def _joined(b1, e1, keep1, b2, e2, keep2):
    """The union of the kept intervals of two lists, each sorted by begin, touching
    intervals joined: merge_overlaps of them all sorted by begin, in one pass."""
    n1, n2 = len(b1), len(b2)
    out_b = np.empty(n1 + n2, np.int64)
    out_e = np.empty(n1 + n2, np.int64)
    i = j = m = 0
    while i < n1 or j < n2:
        if j >= n2 or (i < n1 and b1[i] <= b2[j]):
            b, e, kept = b1[i], e1[i], keep1[i]
            i += 1
        else:
            b, e, kept = b2[j], e2[j], keep2[j]
            j += 1
        if not kept:
            continue
        if m > 0 and b <= out_e[m - 1]:
            if e > out_e[m - 1]:
                out_e[m - 1] = e
        else:
            out_b[m] = b
            out_e[m] = e
            m += 1
    return out_b[:m].copy(), out_e[:m].copy()


def _cache_calls(reader, locations):
    """A location's visits (begin, end, callpath) from the cache: those of `locations` read
    at once (runs of consecutive locations as one range)."""
    columns = ["begin", "end", "callpath"]
    if not reader.has("calls"):
        return lambda loc: {k: np.zeros(0, np.int64) for k in columns}
    rows = reader.read("calls", locations=locations, columns=columns) if len(locations) else {}
    start = dict(zip(locations, np.concatenate(([0], np.cumsum(reader.counts_per_location("calls")[locations])))))
    count = reader.counts_per_location("calls")
    return lambda loc: ({k: rows[k][start[loc]:start[loc] + count[loc]] for k in columns} if loc in start
                        else reader.read("calls", locations=[loc], columns=columns))
