"""One location's raw records -> cache rows (events, states, visits with
local call paths) and the two halves of its point-to-point messages (numba
kernel), and the FIFO matching of those halves into messages."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from popview.cache.progress import Cancelled
from popview.jit import njit
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
    """Pair sends with receives by (communicator, sender, receiver, tag) in FIFO order:
    the k-th send of a key (by time, then arrival) with its k-th receive. Returns the
    messages columns by sender location then send time (ties by key, then FIFO rank),
    and the unmatched send / receive counts.

    Each side is sorted apart by (key, time) and a kernel walks the two in step, so
    the only arrays made are the sort orders and the pairs: allocating fresh memory
    costs here more than the sort (its page faults were 0.55 of the 0.67 s of CPU on
    926 k halves, when both sides were joined, sorted and compared column by column).
    From SIDES_APART halves on, the two sides' keys and sorts run on two threads (numpy
    releases the GIL in both): the matching runs after the last location, when the other
    core would idle."""
    n_s, n_r = len(sends["time"]), len(recvs["time"])
    if n_s == 0 or n_r == 0:
        return _no_messages(), n_s, n_r
    layout = _key_layout(sends, recvs)
    if layout is None:
        key_s, key_r = _ranked_keys(sends, recvs)
        (key_s, by_s), (key_r, by_r) = _by_key(sends, key_s), _by_key(recvs, key_r)
    elif n_s + n_r < SIDES_APART:
        (key_s, by_s), (key_r, by_r) = _sorted_side(sends, layout), _sorted_side(recvs, layout)
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="popview-match") as pool:
            job = pool.submit(_sorted_side, sends, layout)
            key_r, by_r = _sorted_side(recvs, layout)
            key_s, by_s = job.result()
    at_s, at_r = _pair_in_step(key_s[by_s], key_r[by_r])
    i_s, i_r = by_s[at_s], by_r[at_r]
    final = np.lexsort((sends["time"][i_s], sends["loc"][i_s]))
    i_s, i_r = i_s[final], i_r[final]
    send_time, recv_time = sends["time"][i_s], recvs["time"][i_r]
    msgs = {"send_loc": sends["loc"][i_s].astype(np.int32), "recv_loc": recvs["loc"][i_r].astype(np.int32),
            "send_time": send_time, "send_phys": send_time, "recv_time": recv_time, "recv_phys": recv_time,
            "size": sends["size"][i_s], "tag": sends["tag"][i_s], "comm": sends["comm"][i_s].astype(np.int32)}
    return msgs, n_s - len(i_s), n_r - len(i_r)


KEY_COLUMNS = ("comm", "src", "dst", "tag")
SIDES_APART = 200_000      # halves in all from which the two sides are keyed and sorted on two threads


def _key_layout(sends: dict, recvs: dict) -> list[tuple[str, int, int]] | None:
    """(column, lowest value of both sides, bit offset) of each key column that varies,
    for packing the key into 63 bits; None when they do not fit."""
    layout, bits = [], 0
    for name in reversed(KEY_COLUMNS):
        s, r = sends[name], recvs[name]
        low = min(int(s.min()), int(r.min()))
        width = max(max(int(s.max()), int(r.max())) - low, 0).bit_length()
        if bits + width > 63:
            return None
        if width:
            layout.append((name, low, bits))
        bits += width
    return layout


def _packed(side: dict, layout: list[tuple[str, int, int]]) -> np.ndarray:
    key = np.zeros(len(side["time"]), np.int64)
    for name, low, bits in layout:
        key |= (side[name] - low) << bits
    return key


def _sorted_side(side: dict, layout: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """One side's packed keys and its order by (key, time)."""
    return _by_key(side, _packed(side, layout))


def _by_key(side: dict, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return key, np.lexsort((side["time"], key))


def _ranked_keys(sends: dict, recvs: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each half's key as its rank among the distinct (comm, src, dst, tag) of both sides."""
    n_s = len(sends["time"])
    cols = [np.concatenate((sends[name], recvs[name])) for name in KEY_COLUMNS]
    order = np.lexsort(cols[::-1])
    cols = [c[order] for c in cols]
    new = np.ones(len(order), bool)
    new[1:] = np.any([c[1:] != c[:-1] for c in cols], axis=0)
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ranks[:n_s], ranks[n_s:]


@njit(cache=True, nogil=True)
def _pair_in_step(key_s, key_r):
    """Positions of the pairs in two key-sorted sides: within a key, the k-th of one
    side with the k-th of the other; in key order."""
    n = min(len(key_s), len(key_r))
    at_s = np.empty(n, np.int64)
    at_r = np.empty(n, np.int64)
    i = j = m = 0
    while i < len(key_s) and j < len(key_r):
        if key_s[i] == key_r[j]:
            at_s[m] = i
            at_r[m] = j
            m += 1
            i += 1
            j += 1
        elif key_s[i] < key_r[j]:
            i += 1
        else:
            j += 1
    return at_s[:m], at_r[:m]


def _no_messages() -> dict:
    from popview.cache import schema
    return schema.empty("messages")
