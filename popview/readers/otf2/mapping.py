"""One location's raw records -> cache rows (events, states) and the two
halves of its point-to-point messages, all with numpy column operations."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.readers.otf2 import definitions as dd
from popview.readers.otf2 import raw
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents
from popview.readers.otf2.states import OP_ENTER, OP_LEAVE, OP_OFF, OP_ON, location_states

UNDEFINED_U32 = 0xFFFFFFFF

# raw kind -> (info event type, value column or None for 1)
_INFO = {
    raw.THREAD_FORK: (46000001, "a"), raw.THREAD_JOIN: (46000002, None), raw.TEAM_BEGIN: (46000003, None),
    raw.TEAM_END: (46000004, None), raw.LOCK_ACQUIRE: (46000005, "a+1"), raw.LOCK_RELEASE: (46000006, "a+1"),
    raw.TASK_CREATE: (46000007, "a+1"), raw.TASK_SWITCH: (46000008, "a+1"), raw.TASK_COMPLETE: (46000009, "a+1"),
    raw.MEASUREMENT: (46000010, "a"), raw.IO_BEGIN: (46000011, "a"), raw.IO_COMPLETE: (46000012, "a"),
    raw.RMA: (46000013, "a"), raw.THREAD_LIFE: (46000014, None),
}


@dataclass
class Halves:
    """Send or receive halves of messages: parallel columns."""

    loc: list = field(default_factory=list)
    time: list = field(default_factory=list)
    comm: list = field(default_factory=list)
    src: list = field(default_factory=list)
    dst: list = field(default_factory=list)
    tag: list = field(default_factory=list)
    size: list = field(default_factory=list)

    def add(self, **cols) -> None:
        for k, v in cols.items():
            getattr(self, k).append(np.asarray(v, np.int64))

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in vars(self).items()}


@dataclass
class Problems:
    """Counts of records that could not be represented, for the warnings."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, n: int) -> None:
        if n:
            self.counts[what] = self.counts.get(what, 0) + int(n)


def to_ns(ticks: np.ndarray, tables: Tables) -> np.ndarray:
    return np.rint((ticks - tables.global_offset) * tables.ns_per_tick).astype(np.int64)


def convert_location(loc: int, kind: str, process: int, rec: RawEvents, tables: Tables, t_end: int,
                     root: str | None, idle_state: int, sends: Halves, recvs: Halves,
                     problems: Problems) -> tuple[dict, dict | None]:
    """(events columns, states columns or None) of one location."""
    t = to_ns(rec.time, tables)
    parts = [_region_events(rec, t, tables, root, problems)]
    parts.append(_metric_events(rec, t, tables, problems))
    parts.append(_collective_events(rec, t, tables, process, problems))
    parts.append(_info_events(rec, t))
    _messages(loc, process, rec, t, tables, sends, recvs, problems)
    problems.add("records of other kinds (program begin/end, parameters, requests...)",
                 int(np.count_nonzero(rec.kind == raw.OTHER)))
    ev_time = np.concatenate([p[0] for p in parts])
    ev_type = np.concatenate([p[1] for p in parts])
    ev_value = np.concatenate([p[2] for p in parts])
    ev_seq = np.concatenate([p[3] for p in parts])
    order = np.lexsort((ev_seq, ev_time))
    events = {"loc": np.full(len(order), loc, np.int32), "time": ev_time[order],
              "type": ev_type[order].astype(np.int32), "value": ev_value[order]}
    states = None
    if kind != "metric":
        stream_time, stream_op, stream_region = parts[0][4]
        b, e, s = location_states(stream_time, stream_op, stream_region, tables.region_state, idle_state, t_end)
        states = {"loc": np.full(len(b), loc, np.int32), "begin": b, "end": e, "state": s}
    return events, states


def _region_events(rec: RawEvents, t: np.ndarray, tables: Tables, root: str | None, problems: Problems):
    """Enter/leave (+ buffer flushes, artificial roots) as REGION_TYPE events, and the
    (time, op, region) stream of the state kernel, with measurement on/off folded in."""
    k = rec.kind
    pos = np.arange(len(k), dtype=np.float64)
    sel = (k == raw.ENTER) | (k == raw.LEAVE)
    ref = rec.a[sel]
    known = (ref >= 0) & (ref < len(tables.region_index))
    region = np.full(len(ref), -1, np.int64)
    region[known] = tables.region_index[ref[known]]
    ok = region >= 0
    problems.add("enter/leave records of undefined regions", int(np.count_nonzero(~ok)))
    r_time, r_enter, r_region, r_seq = t[sel][ok], (k[sel] == raw.ENTER)[ok], region[ok], pos[sel][ok]
    flush = k == raw.BUFFER_FLUSH
    if flush.any():
        f_start, f_stop = t[flush], to_ns(rec.a[flush], tables)
        f_stop = np.maximum(f_stop, f_start)
        n = len(f_start)
        r_time = np.concatenate([r_time, f_start, f_stop])
        r_enter = np.concatenate([r_enter, np.ones(n, bool), np.zeros(n, bool)])
        r_region = np.concatenate([r_region, np.full(2 * n, tables.flush_region)])
        r_seq = np.concatenate([r_seq, pos[flush] + 0.25, pos[flush] + 0.5])
    if root is not None and len(t):
        r_time = np.concatenate([[t[0]], r_time, [t[-1]]])
        r_enter = np.concatenate([[True], r_enter, [False]])
        r_region = np.concatenate([[tables.root_region[root]], r_region, [tables.root_region[root]]])
        r_seq = np.concatenate([[-1.0], r_seq, [len(k) + 1.0]])
    order = np.lexsort((r_seq, r_time))
    r_time, r_enter, r_region, r_seq = r_time[order], r_enter[order], r_region[order], r_seq[order]
    values = np.where(r_enter, r_region + 1, 0)
    meas = k == raw.MEASUREMENT
    s_time = np.concatenate([r_time, t[meas]])
    s_op = np.concatenate([np.where(r_enter, OP_ENTER, OP_LEAVE), np.where(rec.a[meas] == 1, OP_ON, OP_OFF)])
    s_region = np.concatenate([r_region, np.zeros(int(meas.sum()), np.int64)])
    s_order = np.lexsort((np.concatenate([r_seq, pos[meas]]), s_time))
    stream = (s_time[s_order], s_op[s_order].astype(np.int8), s_region[s_order])
    return r_time, np.full(len(r_time), dd.REGION_TYPE, np.int64), values, r_seq, stream


def _metric_events(rec: RawEvents, t: np.ndarray, tables: Tables, problems: Problems):
    sel = np.flatnonzero(rec.kind == raw.METRIC)
    if len(sel) == 0:
        return _empty()
    refs, pos = rec.a[sel], rec.b[sel]
    code = np.full(len(sel), -1, np.int64)
    accumulated = np.zeros(len(sel), bool)
    for ref in np.unique(refs):
        members = tables.metric_members.get(int(ref), [])
        m = refs == ref
        p = pos[m]
        good = p < len(members)
        codes = np.array([c for c, _ in members] or [-1], np.int64)
        accs = np.array([a for _, a in members] or [False], bool)
        code[np.flatnonzero(m)[good]] = codes[p[good]]
        accumulated[np.flatnonzero(m)[good]] = accs[p[good]]
    value = rec.c[sel].copy()
    is_float = rec.d[sel] == 1
    if is_float.any():
        value[is_float] = np.rint(rec.c[sel][is_float].view(np.float64)).astype(np.int64)
    good = code >= 0
    problems.add("metric values of undefined metrics", int(np.count_nonzero(~good)))
    sel, code, value, accumulated = sel[good], code[good], value[good], accumulated[good]
    order = np.lexsort((sel, code))
    c_sorted, v_sorted = code[order], value[order]
    diff = np.diff(v_sorted, prepend=0)
    first = np.r_[True, c_sorted[1:] != c_sorted[:-1]]
    diff[first] = v_sorted[first]
    delta = np.empty_like(value)
    delta[order] = diff
    value = np.where(accumulated, delta, value)
    return t[sel], code, value, sel.astype(np.float64)


def _collective_events(rec: RawEvents, t: np.ndarray, tables: Tables, process: int, problems: Problems):
    """Root, communicator and bytes of each collective, at its begin (as Extrae records them)."""
    ends = np.flatnonzero(rec.kind == raw.COLL_END)
    if len(ends) == 0:
        return _empty()
    begins = np.flatnonzero(rec.kind == raw.COLL_BEGIN)
    b = np.searchsorted(begins, ends) - 1
    has_begin = b >= 0
    problems.add("collective ends without a begin", int(np.count_nonzero(~has_begin)))
    at = np.where(has_begin, begins[np.maximum(b, 0)], ends)
    comm, root = rec.b[ends], rec.c[ends]
    root_proc = np.full(len(ends), -1, np.int64)
    for c in np.unique(comm):
        m = comm == c
        procs = tables.comm_procs.get(int(c))
        if procs is None:
            continue
        r = root[m]
        valid = (r >= 0) & (r < max(len(procs), 1)) & (r != UNDEFINED_U32)
        out = np.full(len(r), -1, np.int64)
        if int(c) in tables.comm_self:
            out[valid] = process
        elif len(procs):
            out[valid] = procs[r[valid]]
        root_proc[m] = out
    n = len(ends)
    time = np.repeat(t[at], 4)
    types = np.tile(np.array([dd.COLL_ROOT, dd.COLL_COMM, dd.COLL_BYTES_SENT, dd.COLL_BYTES_RECV], np.int64), n)
    values = np.stack([root_proc + 1, comm, np.maximum(rec.d[ends], 0), np.maximum(rec.e[ends], 0)], axis=1).ravel()
    seq = np.repeat(at.astype(np.float64), 4) + np.tile([0.01, 0.02, 0.03, 0.04], n)
    return time, types, values, seq


def _info_events(rec: RawEvents, t: np.ndarray):
    parts = []
    for kind, (code, column) in _INFO.items():
        sel = np.flatnonzero(rec.kind == kind)
        if len(sel) == 0:
            continue
        if column is None:
            value = np.ones(len(sel), np.int64)
        else:
            value = rec.a[sel] + (1 if column == "a+1" else 0)
        parts.append((t[sel], np.full(len(sel), code, np.int64), value, sel.astype(np.float64)))
    if not parts:
        return _empty()
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


def _messages(loc: int, process: int, rec: RawEvents, t: np.ndarray, tables: Tables,
              sends: Halves, recvs: Halves, problems: Problems) -> None:
    for kinds, halves, peer_is_dst in (((raw.MPI_SEND, raw.MPI_ISEND), sends, True),
                                       ((raw.MPI_RECV, raw.MPI_IRECV), recvs, False)):
        sel = np.flatnonzero(np.isin(rec.kind, kinds))
        if len(sel) == 0:
            continue
        comm, rank = rec.b[sel], rec.a[sel]
        peer = np.full(len(sel), -1, np.int64)
        for c in np.unique(comm):
            m = comm == c
            procs = tables.comm_procs.get(int(c))
            if procs is None:
                continue
            r = rank[m]
            if int(c) in tables.comm_self:
                peer[m] = process
                continue
            valid = (r >= 0) & (r < len(procs))
            out = np.full(len(r), -1, np.int64)
            out[valid] = procs[r[valid]]
            peer[m] = out
        ok = peer >= 0
        problems.add("messages with an unknown communicator or rank", int(np.count_nonzero(~ok)))
        sel, comm, peer = sel[ok], comm[ok], peer[ok]
        me = np.full(len(sel), process, np.int64)
        halves.add(loc=np.full(len(sel), loc), time=t[sel], comm=comm,
                   src=me if peer_is_dst else peer, dst=peer if peer_is_dst else me,
                   tag=rec.c[sel], size=rec.d[sel])


def _empty():
    z = np.zeros(0, np.int64)
    return z, z, z, np.zeros(0, np.float64)


def match_messages(sends: dict, recvs: dict) -> tuple[dict, int, int]:
    """Pair sends with receives by (communicator, sender, receiver, tag) in FIFO
    order. Returns the messages columns and the unmatched send / receive counts."""
    n_s, n_r = len(sends["time"]), len(recvs["time"])
    if n_s == 0 or n_r == 0:
        return _no_messages(), n_s, n_r
    both = {c: np.concatenate([sends[c], recvs[c]]) for c in ("comm", "src", "dst", "tag", "time")}
    side = np.r_[np.zeros(n_s, np.int8), np.ones(n_r, np.int8)]
    order = np.lexsort((np.arange(n_s + n_r), both["time"], side, both["tag"], both["dst"], both["src"], both["comm"]))
    key = [both[c][order] for c in ("comm", "src", "dst", "tag")]
    new_group = np.r_[True, np.any([k[1:] != k[:-1] for k in key], axis=0)]
    group = np.cumsum(new_group) - 1
    start = np.flatnonzero(new_group)
    s_side = side[order]
    n_send = np.bincount(group, weights=(s_side == 0), minlength=len(start)).astype(np.int64)
    pos = np.arange(n_s + n_r) - start[group]
    is_recv = s_side == 1
    occ = pos - n_send[group]                        # rank of a receive among its group's receives
    paired = is_recv & (occ < n_send[group])
    recv_rows = order[paired]                        # indices into the concatenation (>= n_s)
    send_rows = order[start[group[paired]] + occ[paired]]
    i_s, i_r = send_rows, recv_rows - n_s
    msgs = {"send_loc": sends["loc"][i_s].astype(np.int32), "recv_loc": recvs["loc"][i_r].astype(np.int32),
            "send_time": sends["time"][i_s], "send_phys": sends["time"][i_s],
            "recv_time": recvs["time"][i_r], "recv_phys": recvs["time"][i_r],
            "size": sends["size"][i_s], "tag": sends["tag"][i_s], "comm": sends["comm"][i_s].astype(np.int32)}
    return msgs, n_s - len(i_s), n_r - len(i_r)


def _no_messages() -> dict:
    from popview.cache import schema
    return schema.empty("messages")
