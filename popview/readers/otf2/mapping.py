"""One location's raw records -> cache rows (events, states, visits with
local call paths) and the two halves of its point-to-point messages (numba
kernel), and the FIFO matching of those halves into messages (numpy)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.cache.progress import Cancelled
from popview.readers.otf2 import kernel
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents


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


@dataclass
class Links:
    """What ties a location to the others of its process (see kernel.py): graft
    intervals with the master's fork call path and its depth, and the regions to
    re-enter at each switch to an explicit task (CSR: offsets, regions)."""

    graft_begin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    graft_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    graft_base: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    graft_depth: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    restore_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    restore_regions: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


@dataclass
class Mapped:
    """One location's rows: events, states (None for metric locations), visits with
    local call paths and the local call-path table (parent, region)."""

    events: dict
    states: dict | None
    visits: dict
    local_parent: np.ndarray
    local_region: np.ndarray


def convert_location(loc: int, kind: str, process: int, rec: RawEvents, tables: Tables, t_end: int,
                     root: str | None, idle_state: int, sends: Halves, recvs: Halves,
                     problems: Problems, links: Links | None = None, cancel: np.ndarray | None = None) -> Mapped:
    """The rows of one location; its message halves go to `sends` / `recvs`. Setting
    cancel[0] (a uint8 array of one) stops the kernel: Cancelled is raised."""
    lk = tables.kernel_tables()
    links = links or Links()
    cancel = np.zeros(1, np.uint8) if cancel is None else cancel
    out = kernel.map_location(
        rec.kind, rec.time, rec.a, rec.b, rec.c, rec.c.view(np.float64), rec.d, rec.e,
        np.int64(tables.global_offset), np.float64(tables.ns_per_tick), np.int64(t_end),
        tables.region_index.astype(np.int64), tables.region_state, np.int64(tables.flush_region),
        np.int64(tables.root_region[root] if root else -1), np.int64(tables.root_region["TASKS"]),
        np.int32(idle_state), kind != "metric",
        lk.metric_code, lk.metric_slot, lk.metric_acc, lk.metric_double, np.int64(lk.n_slots),
        lk.comm_procs, lk.comm_size, lk.comm_self, np.int64(process), kernel.INFO,
        links.graft_begin, links.graft_end, links.graft_base, links.graft_depth,
        links.restore_offsets, links.restore_regions, cancel)
    if cancel[0]:
        raise Cancelled("cancelled by the user")
    et, ey, ev, sb, se, ss, mt, mc, mp, mg, mz, ms, found, vb, ve, vcp, lt_parent, lt_region, lt_depth = out
    for what, n in zip(kernel.PROBLEMS, found):
        problems.add(what, int(n))
    events = {"loc": np.full(len(et), loc, np.int32), "time": et, "type": ey.astype(np.int32), "value": ev}
    states = None
    if kind != "metric":
        states = {"loc": np.full(len(sb), loc, np.int32), "begin": sb, "end": se, "state": ss}
    visits = {"loc": np.full(len(vb), loc, np.int32), "begin": vb, "end": ve, "callpath": vcp,
              "depth": lt_depth.astype(np.int16)[vcp]}
    is_send = ms == 1
    me = np.full(len(mt), process, np.int64)
    for halves, sel in ((sends, is_send), (recvs, ~is_send)):
        if sel.any():
            halves.add(loc=np.full(int(sel.sum()), loc), time=mt[sel], comm=mc[sel],
                       src=me[sel] if halves is sends else mp[sel], dst=mp[sel] if halves is sends else me[sel],
                       tag=mg[sel], size=mz[sel])
    return Mapped(events, states, visits, lt_parent, lt_region)


def match_messages(sends: dict, recvs: dict) -> tuple[dict, int, int]:
    """Pair sends with receives by (communicator, sender, receiver, tag) in FIFO
    order. Returns the messages columns and the unmatched send / receive counts."""
    n_s, n_r = len(sends["time"]), len(recvs["time"])
    if n_s == 0 or n_r == 0:
        return _no_messages(), n_s, n_r
    both = {c: np.concatenate([sends[c], recvs[c]]) for c in ("comm", "src", "dst", "tag", "time")}
    side = np.r_[np.zeros(n_s, np.int8), np.ones(n_r, np.int8)]
    order = _fifo_order(both, side)
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


def _fifo_order(both: dict, side: np.ndarray) -> np.ndarray:
    """Stable order by (comm, src, dst, tag, side, time): the first five packed into
    one key when their ranges fit 63 bits (they nearly always do), so the sort has
    two keys instead of six."""
    names = ("comm", "src", "dst", "tag")
    packed, bits = side.astype(np.int64), 1
    for name in reversed(names):
        col = both[name]
        low = int(col.min())
        width = max(int(col.max()) - low, 0).bit_length()
        if bits + width > 63:
            return np.lexsort((both["time"], side) + tuple(both[n] for n in reversed(names)))
        packed |= (col - low) << bits
        bits += width
    return np.lexsort((both["time"], packed))


def _no_messages() -> dict:
    from popview.cache import schema
    return schema.empty("messages")
