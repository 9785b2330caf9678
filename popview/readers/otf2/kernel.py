"""One pass over a location's raw records (numba): the events rows (regions,
metrics, collectives, info), the thread states from the region stack, and
the message halves. The records are in time order, so the output is too."""
from __future__ import annotations

import numba
import numpy as np

from popview.model.states import NOT_CREATED
from popview.readers.otf2 import raw
from popview.readers.otf2.definitions import COLL_BYTES_RECV as COLL_RECV
from popview.readers.otf2.definitions import COLL_BYTES_SENT as COLL_SENT
from popview.readers.otf2.definitions import COLL_COMM, COLL_ROOT, REGION_TYPE

TRACING_DISABLED = 14
UNDEFINED_U32 = 0xFFFFFFFF

# Problem counters (indexes into the returned array).
P_UNDEFINED_REGION, P_UNDEFINED_METRIC, P_UNKNOWN_PEER, P_COLL_WITHOUT_BEGIN, P_OTHER_RECORDS = range(5)
PROBLEMS = ("enter/leave records of undefined regions", "metric values of undefined metrics",
            "messages with an unknown communicator or rank", "collective ends without a begin",
            "records of other kinds (program begin/end, parameters, requests...)")

INFO_BASE = REGION_TYPE   # info event types are INFO_BASE + 1 ... (definitions.INFO_TYPES)
# raw kind -> (info type offset from INFO_BASE, value: 0 -> 1, 1 -> a, 2 -> a + 1)
INFO = np.full((raw.N_KINDS, 2), -1, np.int64)
for _k, _code, _v in ((raw.THREAD_FORK, 1, 1), (raw.THREAD_JOIN, 2, 0), (raw.TEAM_BEGIN, 3, 0),
                      (raw.TEAM_END, 4, 0), (raw.LOCK_ACQUIRE, 5, 2), (raw.LOCK_RELEASE, 6, 2),
                      (raw.TASK_CREATE, 7, 2), (raw.TASK_SWITCH, 8, 2), (raw.TASK_COMPLETE, 9, 2),
                      (raw.MEASUREMENT, 10, 1), (raw.IO_BEGIN, 11, 1), (raw.IO_COMPLETE, 12, 1),
                      (raw.RMA, 13, 1), (raw.THREAD_LIFE, 14, 0)):
    INFO[_k] = (_code, _v)


@numba.njit(cache=True, inline="always")
def _ns(ticks, offset, ns_per_tick):
    return np.int64(np.rint((ticks - offset) * ns_per_tick))


@numba.njit(cache=True)
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


@numba.njit(cache=True, nogil=True)
def map_location(kind, ticks, a, b, c, cf, d, e, offset, ns_per_tick, t_end,
                 region_index, region_state, flush_region, root_region, idle_state, with_states,
                 metric_code, metric_slot, metric_acc, n_slots,
                 comm_procs, comm_size, comm_self, process, info):
    n = len(kind)
    cap = 2 * n + 8
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
    problems = np.zeros(5, np.int64)
    last_value = np.zeros(max(n_slots, 1), np.int64)
    seen_slot = np.zeros(max(n_slots, 1), np.bool_)
    stack = np.empty(64, np.int64)
    depth = 0
    off = False
    cur = NOT_CREATED
    t_prev = np.int64(0)
    m = 0
    nstates = 0
    nmsg = 0
    pending_coll = -1          # first of 4 reserved event slots of an open collective
    flush_until = np.int64(-1)  # pending leave of a buffer flush
    t_first = _ns(ticks[0], offset, ns_per_tick) if n else np.int64(0)
    t_last = _ns(ticks[n - 1], offset, ns_per_tick) if n else np.int64(0)
    for i in range(n + 2):
        # i == 0: artificial root enter; i == n + 1: root leave; otherwise record i - 1
        if i == 0 or i == n + 1:
            if root_region < 0 or n == 0:
                continue
            t = t_first if i == 0 else t_last
            k = raw.ENTER if i == 0 else raw.LEAVE
            region = root_region
        else:
            r = i - 1
            k = kind[r]
            t = _ns(ticks[r], offset, ns_per_tick)
            region = -1
        if flush_until >= 0 and (t >= flush_until or i == n + 1):
            # the flush ends before this record
            nstates, t_prev, m, depth, cur = _end_flush(flush_until, with_states, sb, se, ss, nstates, t_prev,
                                                        cur, et, ey, ev, m, depth, stack, off, region_state,
                                                        idle_state)
            flush_until = -1
        if with_states:
            nstates = _push_state(sb, se, ss, nstates, t_prev, t, cur)
            t_prev = max(t_prev, t)
        if m + 8 > len(et):
            et = _grow(et)
            ey = _grow(ey)
            ev = _grow(ev)
        if k == raw.ENTER or k == raw.LEAVE:
            if region < 0:
                ref = a[i - 1]
                if 0 <= ref < len(region_index):
                    region = region_index[ref]
                if region < 0:
                    problems[P_UNDEFINED_REGION] += 1
                    continue
            et[m] = t
            ey[m] = REGION_TYPE
            if k == raw.ENTER:
                ev[m] = region + 1
                if depth == len(stack):
                    stack = np.concatenate((stack, np.empty(depth, np.int64)))
                stack[depth] = region
                depth += 1
            else:
                ev[m] = 0
                if depth > 0:
                    depth -= 1
            m += 1
        elif k == raw.BUFFER_FLUSH:
            r = i - 1
            et[m] = t
            ey[m] = REGION_TYPE
            ev[m] = flush_region + 1
            m += 1
            if depth == len(stack):
                stack = np.concatenate((stack, np.empty(depth, np.int64)))
            stack[depth] = flush_region
            depth += 1
            flush_until = max(_ns(a[r], offset, ns_per_tick), t)
        elif k == raw.MEASUREMENT:
            r = i - 1
            off = a[r] != 1
            et[m] = t
            ey[m] = INFO_BASE + 10
            ev[m] = a[r]
            m += 1
        elif k == raw.METRIC:
            r = i - 1
            ref = a[r]
            pos = b[r]
            if ref < 0 or ref >= metric_code.shape[0] or pos < 0 or pos >= metric_code.shape[1] \
                    or metric_code[ref, pos] < 0:
                problems[P_UNDEFINED_METRIC] += 1
                continue
            value = c[r]
            if d[r] == 1:
                value = np.int64(np.rint(cf[r]))
            if metric_acc[ref, pos]:
                slot = metric_slot[ref, pos]
                delta = value - last_value[slot] if seen_slot[slot] else value
                last_value[slot] = value
                seen_slot[slot] = True
                value = delta
            et[m] = t
            ey[m] = metric_code[ref, pos]
            ev[m] = value
            m += 1
        elif k == raw.COLL_BEGIN:
            pending_coll = m
            for q in range(4):
                et[m] = t
                ey[m] = -1
                ev[m] = 0
                m += 1
        elif k == raw.COLL_END:
            r = i - 1
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
            r = i - 1
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
            r = i - 1
            et[m] = t
            ey[m] = INFO_BASE + info[k, 0]
            ev[m] = 1 if info[k, 1] == 0 else (a[r] if info[k, 1] == 1 else a[r] + 1)
            m += 1
        cur = _state(stack, depth, off, region_state, idle_state)
    if flush_until >= 0:
        nstates, t_prev, m, depth, cur = _end_flush(flush_until, with_states, sb, se, ss, nstates, t_prev, cur,
                                                    et, ey, ev, m, depth, stack, off, region_state, idle_state)
    if with_states:  # after its last record a finished location is no longer running
        tail = NOT_CREATED if depth == 0 and not off else cur
        nstates = _push_state(sb, se, ss, nstates, t_prev, max(t_end, t_prev), tail)
    keep = ey[:m] >= 0          # reserved slots of collectives that never ended
    return (et[:m][keep], ey[:m][keep], ev[:m][keep], sb[:nstates], se[:nstates], ss[:nstates],
            mt[:nmsg], mc[:nmsg], mp[:nmsg], mg[:nmsg], mz[:nmsg], ms[:nmsg], problems)


@numba.njit(cache=True)
def _end_flush(flush_until, with_states, sb, se, ss, nstates, t_prev, cur, et, ey, ev, m, depth, stack, off,
               region_state, idle_state):
    """Close a pending buffer flush at `flush_until`: its state, its leave event, the stack."""
    if with_states:
        nstates = _push_state(sb, se, ss, nstates, t_prev, flush_until, cur)
        t_prev = max(t_prev, flush_until)
    et[m] = flush_until
    ey[m] = REGION_TYPE
    ev[m] = 0
    m += 1
    if depth > 0:
        depth -= 1
    return nstates, t_prev, m, depth, _state(stack, depth, off, region_state, idle_state)


@numba.njit(cache=True, inline="always")
def _state(stack, depth, off, region_state, idle_state):
    if off:
        return TRACING_DISABLED
    if depth == 0:
        return idle_state
    s = region_state[stack[depth - 1]]
    return idle_state if s < 0 else s


@numba.njit(cache=True)
def _grow(x):
    out = np.empty(2 * len(x), x.dtype)
    out[:len(x)] = x
    return out
