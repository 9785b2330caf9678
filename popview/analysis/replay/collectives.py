"""Collective edges: the k-th collective of every member of one communicator
is one instance, synchronised through a virtual node.

all-to-all and barriers: every exit waits for every entry; one-to-all
(bcast, scatter): every exit waits for the root's entry; all-to-one (reduce,
gather): the root's exit waits for every entry. The communicator and root
come from the first events of these types inside the call (Extrae writes
them at the entry, the OTF2 reader at the collective's begin record): 50100004 = communicator id, 50100003 = root, either
as a flag on the root alone (Extrae) or as root process + 1 on every member.

A non-blocking collective (MPI_Iallreduce, MPI_Ibcast, ...) enters the
instance at its call but synchronises where it completes: neither format
ties a request to the MPI_Wait / MPI_Test that completes it, so the exit
is the first wait or test call on that location which begins after the
call and ends no earlier than the instance's last entry (the earliest call
the records allow to be the completing one; a later one would only loosen
the constraint). Neighbourhood collectives are not synchronised: the
process topology is not recorded. MPI_Win_* calls belong to one-sided
communication (rma.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from popview.analysis.replay.graph import COLL_BEGIN, COLL_END, ZERO_LENGTH_END, GraphBuilder
from popview.analysis.replay.records import Calls, select, value_within
from popview.jit import njit

ROOT_TYPE, COMM_TYPE = 50100003, 50100004
ALL, ONE_TO_ALL, ALL_TO_ONE, SKIPPED = range(4)
_ONE_TO_ALL = re.compile(r"^mpi_i?(bcast|scatterv?)$", re.I)
_ALL_TO_ONE = re.compile(r"^mpi_i?(reduce|gatherv?)$", re.I)
_NONBLOCKING = re.compile(r"^mpi_i(all|reduce|gather|scatter|bcast|barrier|scan|exscan)", re.I)
_NEIGHBOURHOOD = re.compile(r"^mpi_i?neighbor_", re.I)
RMA_CALL = re.compile(r"^mpi_win_", re.I)
COMPLETION_CALL = re.compile(r"^mpi_(wait|test)(all|any|some)?$", re.I)


def call_name(name: str) -> str:
    """An MPI call's name without decorations ("MPI_Bcast (root)" -> "MPI_Bcast")."""
    return name.strip().split("(")[0].strip()


def pattern(name: str) -> int:
    """How a collective MPI call synchronises, from its name."""
    n = call_name(name)
    if _NEIGHBOURHOOD.match(n):
        return SKIPPED
    if _ONE_TO_ALL.match(n):
        return ONE_TO_ALL
    if _ALL_TO_ONE.match(n):
        return ALL_TO_ONE
    return ALL


def is_nonblocking(name: str) -> bool:
    return bool(_NONBLOCKING.match(call_name(name)))


@dataclass
class CollectiveStats:
    calls: int = 0
    instances: int = 0
    incomplete: int = 0          # instances with a member missing or extra
    unknown_root: int = 0        # rooted instances replayed as all-to-all
    skipped_neighbourhood: int = 0
    nonblocking: int = 0         # non-blocking calls synchronised at their completion
    uncompleted: int = 0         # non-blocking calls whose completing wait / test was not found
    no_communicator: bool = False


def collective_callpaths(defs, paradigm: str, roles: tuple[str, ...]) -> dict[int, str]:
    """Call path id -> region name for regions of a paradigm and role."""
    out = {}
    for cp, r in enumerate(defs.callpath_region):
        region = defs.regions[int(r)]
        if region.paradigm == paradigm and region.role in roles:
            out[cp] = region.name
    return out


def add_collectives(builder: GraphBuilder, calls_table: Calls, defs, all_barriers: bool = False) -> CollectiveStats:
    """Collective instances as virtual nodes; `all_barriers` synchronises every
    collective like a barrier (as Dimemas does), whatever its root."""
    stats = CollectiveStats()
    names = {cp: n for cp, n in collective_callpaths(defs, "mpi", ("collective", "barrier")).items()
             if not RMA_CALL.match(call_name(n))}
    if not names:
        return stats
    reader = calls_table.reader
    calls = calls_table.select(names.keys())
    if len(calls["loc"]) == 0:
        return stats
    n_cp = len(defs.callpath_region)
    kinds = np.array([pattern(names.get(cp, "")) for cp in range(n_cp)], np.int8)
    nonblocking = np.array([is_nonblocking(names.get(cp, "")) for cp in range(n_cp)], bool)
    kind = kinds[calls["callpath"]]
    if all_barriers:
        kind = np.where(kind == SKIPPED, SKIPPED, ALL).astype(np.int8)
    stats.skipped_neighbourhood = int((kind == SKIPPED).sum())
    loc, begin, end, kind, cp = _rows(kind != SKIPPED, calls["loc"], calls["begin"], calls["end"], kind,
                                      calls["callpath"])
    nb = nonblocking[cp]
    stats.calls = len(loc)
    if stats.calls == 0:
        return stats
    ev = select(reader, "events", "type", (ROOT_TYPE, COMM_TYPE), ["loc", "time", "type", "value"])
    comm = _param(ev, COMM_TYPE, loc, begin, end, -1)
    root_value = _param(ev, ROOT_TYPE, loc, begin, end, 0)
    stats.no_communicator = bool((comm < 0).all())
    group = _instances(comm, loc, begin)
    proc = builder.loc_process
    n_groups = int(group.max()) + 1
    size = np.bincount(group, minlength=n_groups)
    expected = _expected_sizes(defs, comm, group, n_groups, proc)
    stats.instances = n_groups
    stats.incomplete = int(((expected >= 0) & (size != expected)).sum())
    root_loc, unknown = _roots(group, kind, loc, root_value, n_groups, proc)
    stats.unknown_root = int(unknown.sum())
    gkind = np.zeros(n_groups, np.int8)
    gkind[group] = kind
    gkind[unknown] = ALL
    one_process = single_process(group, proc[loc], n_groups)
    virt = builder.virtual(n_groups)
    k = gkind[group]
    is_root = root_loc[group] == loc
    gives = (k != ONE_TO_ALL) | is_root        # entry clock flows into the instance
    takes = (k != ALL_TO_ONE) | is_root        # exit waits for the instance
    cross = ~one_process[group]
    g_loc, g_begin, g_group, g_cross = _rows(gives, loc, begin, group, cross)
    builder.edges(builder.nodes(g_loc, g_begin, COLL_BEGIN), virt[g_group], g_cross)
    exit_at = np.where(end <= begin, ZERO_LENGTH_END, 1)
    stats.nonblocking = int(nb.sum())
    waits = nb & takes
    if waits.any():
        latest = np.full(n_groups, np.iinfo(np.int64).min, np.int64)
        np.maximum.at(latest, g_group, g_begin)
        done = completion_times(calls_table, defs, loc[waits], end[waits], latest[group[waits]])
        stats.uncompleted = int((done < 0).sum())
        end = end.copy()
        end[waits] = done
        exit_at[waits] = 1
        takes &= end >= 0
    t_loc, t_end, t_exit, t_group, t_cross = _rows(takes, loc, end, exit_at, group, cross)
    builder.edges(virt[t_group], builder.nodes(t_loc, t_end, COLL_END, priority=t_exit), t_cross)
    return stats


def _rows(mask, *arrays):
    """The arrays' rows where `mask` holds (the arrays themselves when it always does)."""
    return arrays if mask.all() else tuple(a[mask] for a in arrays)


def completion_times(calls: Calls, defs, loc, after, need) -> np.ndarray:
    """End of the call completing each non-blocking operation (-1: none): the
    first MPI wait / test call on `loc` that begins at or after `after` and
    ends at or after `need`."""
    cps = [cp for cp, r in enumerate(defs.callpath_region)
           if defs.regions[int(r)].paradigm == "mpi" and COMPLETION_CALL.match(call_name(defs.regions[int(r)].name))]
    if not cps:
        return np.full(len(loc), -1, np.int64)
    w = calls.select(cps)
    ptr = np.zeros(defs.n_locations + 1, np.int64)
    np.cumsum(np.bincount(w["loc"], minlength=defs.n_locations)[:defs.n_locations], out=ptr[1:])
    return _completing_call_end(ptr, w["begin"], w["end"], loc.astype(np.int64), after, need)


@njit(cache=True, nogil=True)
def _completing_call_end(ptr, w_begin, w_end, q_loc, q_after, q_need):
    """Wait / test calls of one location do not overlap, so begins and ends
    both ascend: two binary searches per query."""
    out = np.full(len(q_loc), -1, np.int64)
    for i in range(len(q_loc)):
        lo, hi = ptr[q_loc[i]], ptr[q_loc[i] + 1]
        a = lo + np.searchsorted(w_begin[lo:hi], q_after[i])
        b = lo + np.searchsorted(w_end[lo:hi], q_need[i])
        j = max(a, b)
        if j < hi:
            out[i] = w_end[j]
    return out


def _param(ev, etype: int, loc, begin, end, default: int) -> np.ndarray:
    sel = ev["type"] == etype
    if not sel.any():
        return np.full(len(loc), default, np.int64)
    return value_within(loc.astype(np.int64), begin, np.maximum(end, begin), ev["loc"][sel].astype(np.int64),
                        ev["time"][sel], ev["value"][sel].astype(np.int64), default)


def _instances(comm, loc, begin):
    """Instance id of each call: (communicator, k-th call of that location on
    it), instances of one communicator numbered consecutively. Calls come
    sorted by (location, begin)."""
    if len(comm) and (comm == comm[0]).all():          # the usual case: one communicator
        dense, n_comm = np.zeros(len(comm), np.int64), 1
    else:
        values, dense = np.unique(comm, return_inverse=True)
        dense, n_comm = dense.ravel().astype(np.int64), len(values)
    k, largest = _kth_call(dense, loc, n_comm)
    offset = np.zeros(n_comm, np.int64)
    np.cumsum(largest[:-1] + 1, out=offset[1:])
    return offset[dense] + k


@njit(cache=True, nogil=True)
def _kth_call(dense, loc, n_comm):
    """k of each call (its rank among its location's calls on its communicator)
    and the largest k per communicator; counters reset where the location changes."""
    k = np.empty(len(dense), np.int64)
    count = np.zeros(n_comm, np.int64)
    used = np.empty(n_comm, np.int64)
    n_used = 0
    largest = np.full(n_comm, -1, np.int64)
    for i in range(len(dense)):
        if i > 0 and loc[i] != loc[i - 1]:
            for u in range(n_used):
                count[used[u]] = 0
            n_used = 0
        c = dense[i]
        if count[c] == 0:
            used[n_used] = c
            n_used += 1
        k[i] = count[c]
        count[c] += 1
        largest[c] = max(largest[c], k[i])
    return k, largest


def _expected_sizes(defs, comm, group, n_groups, proc) -> np.ndarray:
    """Members of each instance's communicator (-1 when the trace does not say)."""
    by_key = {(p.appl, p.rank): i for i, p in enumerate(defs.processes)}
    members = {}
    for c in defs.communicators:
        procs = {by_key.get((c.get("appl", 0), t), t) for t in c.get("tasks", [])}
        members[int(c["id"])] = len(procs)
    world = len(np.unique(proc))
    gcomm = np.full(n_groups, -1, np.int64)
    gcomm[group] = comm
    ids, inverse = np.unique(gcomm, return_inverse=True)
    sizes = np.array([world if c < 0 else members.get(int(c), -1) for c in ids], np.int64)
    return sizes[inverse.ravel()]


def _roots(group, kind, loc, root_value, n_groups, proc):
    """Root location of each rooted instance, and which rooted instances have none."""
    root_loc = np.full(n_groups, -1, np.int64)
    if (kind == ALL).all():
        return root_loc, np.zeros(n_groups, bool)
    marked = root_value != 0
    n_marked = np.bincount(group[marked], minlength=n_groups)
    # Extrae: the flag sits on the root alone
    alone = marked & (n_marked[group] == 1)
    root_loc[group[alone]] = loc[alone]
    # OTF2 reader: every member carries root process + 1
    shared = marked & (n_marked[group] > 1)
    want = root_value - 1
    hit = shared & (proc[loc] == want)
    root_loc[group[hit]] = loc[hit]
    gkind = np.full(n_groups, ALL, np.int8)
    gkind[group] = kind
    unknown = (gkind != ALL) & (root_loc < 0)
    return root_loc, unknown


@njit(cache=True, nogil=True)
def single_process(group, procs, n_groups):
    """Whether all members of each instance belong to one process."""
    first = np.full(n_groups, -1, np.int64)
    single = np.ones(n_groups, np.bool_)
    for i in range(len(group)):
        g = group[i]
        if first[g] < 0:
            first[g] = procs[i]
        elif procs[i] != first[g]:
            single[g] = False
    return single
