"""One pass over a location's raw records (numba): the events rows (regions,
metrics, collectives, info), the thread states and the visits (calls rows)
from the region stack, and the message halves. The records are in time
order, so the output is too.

Visits carry call-path ids local to the location (callpaths.py merges them).
Two inputs tie a location to the others of its process:
- a graft schedule: the intervals in which the location works in an OpenMP
  team, each with the global call path of the master's fork; a visit entered
  with an empty stack inside an interval hangs below that call path, as
  Score-P and Cube show worker threads;
- task restores: for each switch to an explicit task (generation number
  != 0), the regions open in that task when it was last suspended (maybe on
  another thread). A task runs on top of the thread's own stack, its visits
  below the artificial root TASKS; a switch away ends its open visits and a
  switch back re-enters them, so a task keeps one call stack of its own.
"""
from __future__ import annotations

import numpy as np

from popview.jit import njit, refcount_free
from popview.model.states import FORK_JOIN, NOT_CREATED
from popview.readers.otf2 import raw
from popview.readers.otf2.callpaths import EMPTY, ROOT, rehash, slot
from popview.readers.otf2.definitions import COLL_BYTES_RECV as COLL_RECV
from popview.readers.otf2.definitions import COLL_BYTES_SENT as COLL_SENT
from popview.readers.otf2.definitions import COLL_COMM, COLL_ROOT, REGION_TYPE

TRACING_DISABLED = 14
UNDEFINED_U32 = 0xFFFFFFFF
KEY_OFFSET = 1 << 29        # local call-path keys: (parent + KEY_OFFSET) << 32 | region
RUN = 4096                  # records between checks of the call-path hash's room

# Problem counters (indexes into the returned array).
(P_UNDEFINED_REGION, P_UNDEFINED_METRIC, P_UNKNOWN_PEER, P_COLL_WITHOUT_BEGIN, P_OTHER_RECORDS,
 P_UNMATCHED_LEAVE) = range(6)
PROBLEMS = ("enter/leave records of undefined regions", "metric values of undefined metrics",
            "messages with an unknown communicator or rank", "collective ends without a begin",
            "records of other kinds (program begin/end, parameters, requests...)",
            "region exits without a matching entry")

INFO_BASE = REGION_TYPE   # info event types are INFO_BASE + 1 ... (definitions.INFO_TYPES)
# raw kind -> (info type offset from INFO_BASE, value: 0 -> 1, 1 -> a, 2 -> a + 1)
INFO = np.full((raw.N_KINDS, 2), -1, np.int64)
for _k, _code, _v in ((raw.THREAD_FORK, 1, 1), (raw.THREAD_JOIN, 2, 0), (raw.TEAM_BEGIN, 3, 0),
                      (raw.TEAM_END, 4, 0), (raw.LOCK_ACQUIRE, 5, 2), (raw.LOCK_RELEASE, 6, 2),
                      (raw.TASK_CREATE, 7, 2), (raw.TASK_SWITCH, 8, 2), (raw.TASK_COMPLETE, 9, 2),
                      (raw.MEASUREMENT, 10, 1), (raw.IO_BEGIN, 11, 1), (raw.IO_COMPLETE, 12, 1),
                      (raw.RMA, 13, 1), (raw.THREAD_LIFE, 14, 0)):
    INFO[_k] = (_code, _v)


@njit(cache=True, inline="always")
def _ns(ticks, offset, ns_per_tick):
    return np.int64(np.rint((ticks - offset) * ns_per_tick))


@refcount_free     # per event: no reference counting
def _push_state(sb, se, ss, ns, t_prev, t, cur):
    """Extend the last interval or add one [t_prev, t) with state cur; returns the count."""
    if t <= t_prev:
        return ns
    if ns > 0 and ss[ns - 1] == cur and se[ns - 1] == t_prev:
        se[ns - 1] = t
        return ns
    sb[ns] = t_prev
    se[ns] = t
    ss[ns] = cur
    return ns + 1


@refcount_free     # per event: no reference counting
def _child(parent, external_depth, region, hk, hv, lt_parent, lt_region, lt_depth, lc_region, lc_child, n_lt):
    """Local call path of `region` below `parent` (an external parent has depth
    `external_depth`); returns (id, table size). The last child looked up below
    each call path is remembered: loops repeat it."""
    if parent >= 0 and lc_region[parent] == region:
        return lc_child[parent], n_lt
    key = (parent + KEY_OFFSET) * 4294967296 + region
    i = slot(hk, key)
    if hk[i] == key:
        cp = hv[i]
    else:
        cp = n_lt
        hk[i] = key
        hv[i] = cp
        lt_parent[cp] = parent
        lt_region[cp] = region
        lt_depth[cp] = lt_depth[parent] + 1 if parent >= 0 else (0 if parent == ROOT else external_depth + 1)
        lc_region[cp] = -1
        n_lt += 1
    if parent >= 0:
        lc_region[parent] = region
        lc_child[parent] = cp
    return cp, n_lt


@refcount_free     # per event: no reference counting
def _close_to(level, t, depth, st_row, rows_end):
    """End the visits above stack level `level` at t; returns the new depth."""
    while depth > level:
        depth -= 1
        rows_end[st_row[depth]] = t
    return depth


@njit(cache=True, nogil=True)
def map_location(kind, ticks, a, b, c, cf, d, e, offset, ns_per_tick, t_end,
                 region_index, region_state, flush_region, root_region, tasks_region, idle_state, with_states,
                 metric_code, metric_slot, metric_acc, metric_double, n_slots,
                 comm_procs, comm_size, comm_self, process, info,
                 gs_begin, gs_end, gs_base, gs_depth, rs_off, rs_regions, cancel):
    """One location's records mapped to rows; cancel[0] != 0 stops it between runs of
    records (the caller then discards the partial rows)."""
    n = len(kind)
    cap = 4 * n + 8              # a record adds at most 4 events (a collective), the flush end one more
    et = np.empty(cap, np.int64)
    ey = np.empty(cap, np.int64)
    ev = np.empty(cap, np.int64)
    sb = np.empty(2 * n + 8, np.int64)
    se = np.empty(2 * n + 8, np.int64)
    ss = np.empty(2 * n + 8, np.int32)
    mt = np.empty(n, np.int64)     # message halves: time, comm, peer process, tag, size, is_send
    mc = np.empty(n, np.int64)
    mp = np.empty(n, np.int64)
    mg = np.empty(n, np.int64)
    mz = np.empty(n, np.int64)
    ms = np.empty(n, np.int8)
    n_visits = n + len(rs_regions) + 2     # a record opens at most one visit; plus restores and the root
    rb = np.empty(n_visits, np.int64)      # visits: begin, end, local call path
    re = np.empty(n_visits, np.int64)
    rcp = np.empty(n_visits, np.int64)
    lt_parent = np.empty(n_visits, np.int64)   # local call paths: parent, region, depth
    lt_region = np.empty(n_visits, np.int64)
    lt_depth = np.empty(n_visits, np.int64)
    lc_region = np.empty(n_visits, np.int64)   # the last child looked up below each
    lc_child = np.empty(n_visits, np.int64)
    hk = np.full(256, EMPTY, np.int64)      # local call paths by (parent, region): open addressing
    hv = np.empty(256, np.int64)
    problems = np.zeros(len(PROBLEMS), np.int64)
    last_value = np.zeros(max(n_slots, 1), np.int64)
    last_float = np.zeros(max(n_slots, 1), np.float64)
    seen_slot = np.zeros(max(n_slots, 1), np.bool_)
    bits = np.zeros(1, np.float64)
    bits_int = bits.view(np.int64)
    # the stack: region, local call path, visit row; never deeper than the visits, and pages
    # beyond its depth are never touched (growing it inside the loop made the kernel 1.5x slower)
    st_region = np.empty(n_visits, np.int64)
    st_cp = np.empty(n_visits, np.int64)
    st_row = np.empty(n_visits, np.int64)
    depth = 0
    n_lt = 0
    nr = 0
    floor = 0                  # leaves never pop below this level (the root, the running task's TASKS)
    task_base = -1             # stack level of the running explicit task's TASKS entry
    n_switch = 0               # switches to explicit tasks so far (index into the restores)
    gi = 0                     # current graft interval
    off = False
    forking = False            # between a ThreadFork and the forking thread's next enter / team begin, and
    open_forks = 0             # from its return to the fork's stack level (the leave of the parallel
    fork_depth = np.empty(64, np.int64)    # region, its team end) to its ThreadJoin: joining its team
    joins = False                          # a location without ThreadJoin records never waits in a join
    for r in range(n):
        if kind[r] == raw.THREAD_JOIN:
            joins = True
            break
    cur = NOT_CREATED
    t_prev = np.int64(0)
    m = 0
    nstates = 0
    nmsg = 0
    pending_coll = -1          # first of 4 reserved event slots of an open collective
    flush_until = np.int64(-1)  # pending end of a buffer flush
    flush_level = 0
    t_first = _ns(ticks[0], offset, ns_per_tick) if n else np.int64(0)
    t_last = _ns(ticks[n - 1], offset, ns_per_tick) if n else np.int64(0)
    if root_region >= 0 and n > 0:
        cp, n_lt = _child(ROOT, -1, root_region, hk, hv, lt_parent, lt_region, lt_depth, lc_region, lc_child, n_lt)
        st_region[0], st_cp[0], st_row[0] = root_region, cp, 0
        rb[0], rcp[0] = t_first, cp
        depth, nr, floor = 1, 1, 1
    # records go in runs of RUN; the call-path hash grows only between runs, since
    # reassigning arrays inside the record loop makes it 2x slower
    for start in range(0, n + 1, RUN):
        if cancel[0] != 0:
            break
        need = 2 * (n_lt + min(RUN, n + 1 - start) + len(rs_regions) + 2)   # a record adds one call path,
        if need > len(hk):                                                   # a task switch its restores
            size = len(hk)
            while need > size:
                size *= 2
            hk, hv = rehash(hk, hv, size)
        for r in range(start, min(start + RUN, n + 1)):
            t = _ns(ticks[r], offset, ns_per_tick) if r < n else t_last
            if flush_until >= 0 and (t >= flush_until or r == n):    # the flush ends before this record
                if with_states:
                    nstates = _push_state(sb, se, ss, nstates, t_prev, flush_until, cur)
                    t_prev = max(t_prev, flush_until)
                et[m], ey[m], ev[m] = flush_until, REGION_TYPE, 0
                m += 1
                depth = _close_to(flush_level, flush_until, depth, st_row, re)
                cur = _state(st_region, depth, off, region_state, idle_state)
                flush_until = -1
            if r == n:
                break
            k = kind[r]
            if with_states:
                nstates = _push_state(sb, se, ss, nstates, t_prev, t, cur)
                t_prev = max(t_prev, t)
            if k == raw.ENTER or k == raw.BUFFER_FLUSH:
                if k == raw.ENTER:
                    region = -1
                    ref = a[r]
                    if 0 <= ref < len(region_index):
                        region = region_index[ref]
                    if region < 0:
                        problems[P_UNDEFINED_REGION] += 1
                        continue
                else:
                    region = flush_region
                    flush_until = max(_ns(a[r], offset, ns_per_tick), t)
                    flush_level = depth
                et[m], ey[m], ev[m] = t, REGION_TYPE, region + 1
                m += 1
                parent, external_depth = np.int64(ROOT), np.int64(-1)
                if depth > 0:
                    parent = st_cp[depth - 1]
                elif len(gs_begin):
                    while gi < len(gs_begin) and gs_end[gi] < t:
                        gi += 1
                    if gi < len(gs_begin) and gs_begin[gi] <= t and gs_base[gi] >= 0:
                        parent, external_depth = -2 - gs_base[gi], gs_depth[gi]
                cp, n_lt = _child(parent, external_depth, region, hk, hv, lt_parent, lt_region, lt_depth, lc_region,
                                  lc_child, n_lt)
                st_region[depth], st_cp[depth], st_row[depth] = region, cp, nr
                rb[nr], rcp[nr] = t, cp       # the end is written when the visit ends
                depth += 1
                nr += 1
            elif k == raw.LEAVE:
                et[m], ey[m], ev[m] = t, REGION_TYPE, 0
                m += 1
                if depth > floor:
                    depth -= 1
                    re[st_row[depth]] = t
                else:
                    problems[P_UNMATCHED_LEAVE] += 1
            elif k == raw.TASK_SWITCH or k == raw.TASK_COMPLETE:
                if task_base >= 0:           # the running explicit task stops: suspended or done
                    depth = _close_to(task_base, t, depth, st_row, re)
                    task_base = -1
                    floor = 1 if root_region >= 0 else 0
                if k == raw.TASK_SWITCH and a[r] != 0:
                    cp, n_lt = _child(ROOT, -1, tasks_region, hk, hv, lt_parent, lt_region, lt_depth, lc_region,
                                      lc_child, n_lt)
                    task_base = depth
                    st_region[depth], st_cp[depth], st_row[depth] = tasks_region, cp, nr
                    rb[nr], rcp[nr] = t, cp
                    depth += 1
                    nr += 1
                    if n_switch + 1 < len(rs_off):
                        for q in range(rs_off[n_switch], rs_off[n_switch + 1]):
                            cp, n_lt = _child(st_cp[depth - 1], -1, rs_regions[q], hk, hv, lt_parent, lt_region,
                                              lt_depth, lc_region, lc_child, n_lt)
                            st_region[depth], st_cp[depth], st_row[depth] = rs_regions[q], cp, nr
                            rb[nr], rcp[nr] = t, cp
                            depth += 1
                            nr += 1
                    n_switch += 1
                    floor = task_base + 1
                et[m], ey[m], ev[m] = t, INFO_BASE + info[k, 0], a[r] + 1
                m += 1
            elif k == raw.MEASUREMENT:
                off = a[r] != 1
                et[m], ey[m], ev[m] = t, INFO_BASE + 10, a[r]
                m += 1
            elif k == raw.METRIC:
                ref = a[r]
                pos = b[r]
                if ref < 0 or ref >= metric_code.shape[0] or pos < 0 or pos >= metric_code.shape[1] \
                        or metric_code[ref, pos] < 0:
                    problems[P_UNDEFINED_METRIC] += 1
                    continue
                slot = metric_slot[ref, pos]
                if metric_double[ref, pos]:       # float64 bits, exactly
                    x = cf[r] if d[r] == 1 else np.float64(c[r])
                    if metric_acc[ref, pos]:
                        delta = x - last_float[slot] if seen_slot[slot] else x
                        last_float[slot] = x
                        seen_slot[slot] = True
                        x = delta
                    bits[0] = x
                    value = bits_int[0]
                else:
                    value = c[r] if d[r] != 1 else np.int64(np.rint(cf[r]))
                    if metric_acc[ref, pos]:
                        delta = value - last_value[slot] if seen_slot[slot] else value
                        last_value[slot] = value
                        seen_slot[slot] = True
                        value = delta
                et[m], ey[m], ev[m] = t, metric_code[ref, pos], value
                m += 1
            elif k == raw.COLL_BEGIN:
                pending_coll = m
                for q in range(4):
                    et[m] = t
                    ey[m] = -1
                    ev[m] = 0
                    m += 1
            elif k == raw.COLL_END:
                at = pending_coll
                if at < 0:
                    problems[P_COLL_WITHOUT_BEGIN] += 1
                    at = m
                    for q in range(4):
                        et[m] = t
                        m += 1
                pending_coll = -1
                comm = b[r]
                root = c[r]
                root_proc = -1
                if 0 <= comm < len(comm_size) and root >= 0 and root != UNDEFINED_U32:
                    if comm_self[comm]:
                        root_proc = process
                    elif root < comm_size[comm]:
                        root_proc = comm_procs[comm, root]
                ey[at] = COLL_ROOT
                ev[at] = root_proc + 1
                ey[at + 1] = COLL_COMM
                ev[at + 1] = comm
                ey[at + 2] = COLL_SENT
                ev[at + 2] = max(d[r], 0)
                ey[at + 3] = COLL_RECV
                ev[at + 3] = max(e[r], 0)
            elif k == raw.MPI_SEND or k == raw.MPI_ISEND or k == raw.MPI_RECV or k == raw.MPI_IRECV:
                comm = b[r]
                rank = a[r]
                peer = -1
                if 0 <= comm < len(comm_size):
                    if comm_self[comm]:
                        peer = process
                    elif 0 <= rank < comm_size[comm]:
                        peer = comm_procs[comm, rank]
                if peer < 0:
                    problems[P_UNKNOWN_PEER] += 1
                    continue
                mt[nmsg] = t
                mc[nmsg] = comm
                mp[nmsg] = peer
                mg[nmsg] = c[r]
                mz[nmsg] = d[r]
                ms[nmsg] = 1 if (k == raw.MPI_SEND or k == raw.MPI_ISEND) else 0
                nmsg += 1
            elif k == raw.OTHER:
                problems[P_OTHER_RECORDS] += 1
            elif 0 <= k < info.shape[0] and info[k, 0] >= 0:
                et[m] = t
                ey[m] = INFO_BASE + info[k, 0]
                ev[m] = 1 if info[k, 1] == 0 else (a[r] if info[k, 1] == 1 else a[r] + 1)
                m += 1
            if k == raw.THREAD_FORK:
                forking = True
                if open_forks < len(fork_depth):
                    fork_depth[open_forks] = depth
                open_forks += 1
            elif k == raw.THREAD_JOIN:
                forking = False
                open_forks = max(open_forks - 1, 0)
            elif k == raw.LEAVE or k == raw.TEAM_END:     # back at the fork's level: waiting for the team
                forking = joins and 0 < open_forks <= len(fork_depth) and depth == fork_depth[open_forks - 1]
            elif k == raw.ENTER or k == raw.TEAM_BEGIN:
                forking = False
            cur = FORK_JOIN if forking and not off else _state(st_region, depth, off, region_state, idle_state)
    if root_region >= 0 and depth == 1:   # the root lasts from the first record to the last
        depth = _close_to(0, t_last, depth, st_row, re)
        cur = _state(st_region, depth, off, region_state, idle_state)
    if with_states:  # after its last record a finished location is no longer running
        tail = NOT_CREATED if depth == 0 and not off else cur
        nstates = _push_state(sb, se, ss, nstates, t_prev, max(t_end, t_prev), tail)
    _close_to(0, max(t_end, t_last), depth, st_row, re)     # what is still open lasts to the trace end
    k = 0                       # reserved slots of collectives that never ended left out, in place:
    for i in range(m):          # copies were fresh memory at every location (10^7 events: 60 k page faults)
        if ey[i] >= 0:
            et[k] = et[i]
            ey[k] = ey[i]
            ev[k] = ev[i]
            k += 1
    return (et[:k], ey[:k], ev[:k], sb[:nstates], se[:nstates], ss[:nstates],
            mt[:nmsg], mc[:nmsg], mp[:nmsg], mg[:nmsg], mz[:nmsg], ms[:nmsg], problems,
            rb[:nr], re[:nr], rcp[:nr], lt_parent[:n_lt], lt_region[:n_lt], lt_depth[:n_lt])


@refcount_free     # per event: no reference counting
def _state(stack, depth, off, region_state, idle_state):
    if off:
        return TRACING_DISABLED
    if depth == 0:
        return idle_state
    s = region_state[stack[depth - 1]]
    return idle_state if s < 0 else s


@njit(cache=True)
def _grow(x, at_least=0):
    out = np.empty(max(2 * len(x), at_least), x.dtype)
    out[:len(x)] = x
    return out
