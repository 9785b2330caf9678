"""Collective edges: the k-th collective of every member of one communicator
is one instance, synchronised through a virtual node.

all-to-all and barriers: every exit waits for every entry; one-to-all
(bcast, scatter): every exit waits for the root's entry; all-to-one (reduce,
gather): the root's exit waits for every entry. The communicator and root
come from the first events of these types inside the call (Extrae writes
them at the entry, the OTF2 reader at the collective's begin record): 50100004 = communicator id, 50100003 = root, either
as a flag on the root alone (Extrae) or as root process + 1 on every member.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numba
import numpy as np

from popview.analysis.replay.graph import COLL_BEGIN, COLL_END, ZERO_LENGTH_END, GraphBuilder
from popview.analysis.replay.records import select, value_within

ROOT_TYPE, COMM_TYPE = 50100003, 50100004
ALL, ONE_TO_ALL, ALL_TO_ONE, SKIPPED = range(4)
_ONE_TO_ALL = re.compile(r"^mpi_(bcast|scatterv?)$", re.I)
_ALL_TO_ONE = re.compile(r"^mpi_(reduce|gatherv?)$", re.I)
_NONBLOCKING = re.compile(r"^mpi_i(all|reduce|gather|scatter|bcast|barrier|scan|exscan|neighbor)", re.I)


def pattern(name: str) -> int:
    """How a collective MPI call synchronises, from its name."""
    n = name.strip().split("(")[0].strip()
    if _NONBLOCKING.search(n):
        return SKIPPED
    if _ONE_TO_ALL.match(n):
        return ONE_TO_ALL
    if _ALL_TO_ONE.match(n):
        return ALL_TO_ONE
    return ALL


@dataclass
class CollectiveStats:
    calls: int = 0
    instances: int = 0
    incomplete: int = 0          # instances with a member missing or extra
    unknown_root: int = 0        # rooted instances replayed as all-to-all
    skipped_nonblocking: int = 0
    no_communicator: bool = False


def collective_callpaths(defs, paradigm: str, roles: tuple[str, ...]) -> dict[int, str]:
    """Call path id -> region name for regions of a paradigm and role."""
    out = {}
    for cp, r in enumerate(defs.callpath_region):
        region = defs.regions[int(r)]
        if region.paradigm == paradigm and region.role in roles:
            out[cp] = region.name
    return out


def add_collectives(builder: GraphBuilder, reader, defs, all_barriers: bool = False) -> CollectiveStats:
    """Collective instances as virtual nodes; `all_barriers` synchronises every
    collective like a barrier (as Dimemas does), whatever its root."""
    stats = CollectiveStats()
    names = collective_callpaths(defs, "mpi", ("collective", "barrier"))
    if not names or not reader.has("calls"):
        return stats
    calls = select(reader, "calls", "callpath", names.keys(), ["loc", "begin", "end", "callpath"])
    if len(calls["loc"]) == 0:
        return stats
    kinds = np.array([pattern(names.get(cp, "")) for cp in range(len(defs.callpath_region))], np.int8)
    kind = kinds[calls["callpath"]]
    if all_barriers:
        kind = np.where(kind == SKIPPED, SKIPPED, ALL).astype(np.int8)
    stats.skipped_nonblocking = int((kind == SKIPPED).sum())
    keep = kind != SKIPPED
    loc, begin, end, kind = calls["loc"][keep], calls["begin"][keep], calls["end"][keep], kind[keep]
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
    single_process = _single_process(group, proc[loc], n_groups)
    zero = end <= begin
    pri_end = np.where(zero, ZERO_LENGTH_END, 1)
    b_ids = builder.nodes(loc, begin, COLL_BEGIN)
    e_ids = builder.nodes(loc, end, COLL_END, priority=pri_end)
    virt = builder.virtual(n_groups)
    k = gkind[group]
    is_root = root_loc[group] == loc
    gives = (k != ONE_TO_ALL) | is_root        # entry clock flows into the instance
    takes = (k != ALL_TO_ONE) | is_root        # exit waits for the instance
    cross = ~single_process[group]
    builder.edges(b_ids[gives], virt[group[gives]], cross[gives])
    builder.edges(virt[group[takes]], e_ids[takes], cross[takes])
    return stats


def _param(ev, etype: int, loc, begin, end, default: int) -> np.ndarray:
    sel = ev["type"] == etype
    if not sel.any():
        return np.full(len(loc), default, np.int64)
    return value_within(loc.astype(np.int64), begin, np.maximum(end, begin), ev["loc"][sel].astype(np.int64),
                        ev["time"][sel], ev["value"][sel].astype(np.int64), default)


def _instances(comm, loc, begin):
    """Instance id of each call: (communicator, k-th call of that location on it).
    Calls come sorted by (location, begin), so a stable sort by communicator
    leaves each (communicator, location) run in time order."""
    if len(comm) and (comm == comm[0]).all():          # the usual case: one communicator
        values, dense = comm[:1], np.zeros(len(comm), np.int64)
    else:
        values, dense = np.unique(comm, return_inverse=True)
        dense = dense.ravel()
    order = np.argsort(dense, kind="stable")
    c, lo = dense[order], loc[order]
    new_run = np.ones(len(order), bool)
    new_run[1:] = (c[1:] != c[:-1]) | (lo[1:] != lo[:-1])
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(len(order)), 0))
    k = np.empty(len(order), np.int64)
    k[order] = np.arange(len(order)) - run_start
    # instances of communicator c are numbered offset[c] + k, k = 0 .. its largest k
    largest = np.maximum.reduceat(k[order], np.searchsorted(c, np.arange(len(values))))
    offset = np.zeros(len(values), np.int64)
    np.cumsum(largest[:-1] + 1, out=offset[1:])
    return offset[dense] + k


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


@numba.njit(cache=True)
def _single_process(group, procs, n_groups):
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
