"""One-sided communication (MPI RMA), in the simplest model the records support.

Fence epochs: MPI_Win_fence is a barrier over the window's communicator, so
the k-th fence of every member is one instance whose exits wait for all its
entries. A put, get or accumulate between two fences completes at the
closing fence, which thereby waits for the target's entry too: the
operations need no edges of their own. Neither format records the window
(Extrae writes no window or communicator for a fence; the OTF2 reader keeps
no RMA window records), so the instance spans every location that calls
MPI_Win_fence; instances with a different member count are reported.

Passive target (MPI_Win_lock / unlock and their _all forms): the target
takes no part, so an operation depends on nothing but its origin's own
timeline, which costs nothing on the ideal network. Exclusive locks do
serialise origins, but the lock type is not recorded: not replayed,
reported. Generalised active target (MPI_Win_post / start / complete /
wait / test): the access and exposure groups are not recorded: not
replayed, reported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from popview.analysis.replay.collectives import call_name, single_process
from popview.analysis.replay.graph import COLL_BEGIN, COLL_END, ZERO_LENGTH_END, GraphBuilder
from popview.analysis.replay.records import Calls

_FENCE = re.compile(r"^mpi_win_fence$", re.I)
_LOCK = re.compile(r"^mpi_win_lock(_all)?$", re.I)
_PSCW = re.compile(r"^mpi_win_(post|start|complete|wait|test)$", re.I)
_OPERATION = re.compile(r"^mpi_(r?put|r?get|r?accumulate|r?get_accumulate|fetch_and_op|compare_and_swap)$", re.I)
FENCE, LOCK, PSCW, OPERATION = range(4)


@dataclass
class RmaStats:
    fences: int = 0
    fence_instances: int = 0
    incomplete_fences: int = 0    # instances without every fence-calling location
    lock_epochs: int = 0          # passive-target epochs (lock calls)
    pscw_calls: int = 0           # post / start / complete / wait / test calls, not synchronised
    operations: int = 0           # put / get / accumulate calls


def rma_callpaths(defs) -> dict[int, int]:
    """Call path id -> FENCE / LOCK / PSCW / OPERATION for MPI one-sided calls."""
    out = {}
    for cp, r in enumerate(defs.callpath_region):
        region = defs.regions[int(r)]
        if region.paradigm != "mpi":
            continue
        n = call_name(region.name)
        for kind, rx in ((FENCE, _FENCE), (LOCK, _LOCK), (PSCW, _PSCW), (OPERATION, _OPERATION)):
            if rx.match(n):
                out[cp] = kind
    return out


def add_rma(builder: GraphBuilder, calls_table: Calls, defs) -> RmaStats:
    stats = RmaStats()
    kinds = rma_callpaths(defs)
    if not kinds:
        return stats
    calls = calls_table.select(kinds.keys())
    kind = np.full(len(defs.callpath_region), -1, np.int8)
    kind[list(kinds)] = list(kinds.values())
    k = kind[calls["callpath"]]
    stats.lock_epochs = int((k == LOCK).sum())
    stats.pscw_calls = int((k == PSCW).sum())
    stats.operations = int((k == OPERATION).sum())
    fence = k == FENCE
    stats.fences = int(fence.sum())
    if stats.fences:
        stats.fence_instances, stats.incomplete_fences = _fences(
            builder, calls["loc"][fence], calls["begin"][fence], calls["end"][fence])
    return stats


def _fences(builder: GraphBuilder, loc, begin, end) -> tuple[int, int]:
    """The k-th fence of every fence-calling location is one barrier instance."""
    start = np.r_[0, np.flatnonzero(loc[1:] != loc[:-1]) + 1]     # rows come sorted by (loc, begin)
    k = np.arange(len(loc)) - np.repeat(start, np.diff(np.r_[start, len(loc)]))
    n_groups = int(k.max()) + 1
    size = np.bincount(k, minlength=n_groups)
    cross = ~single_process(k, builder.loc_process[loc], n_groups)[k]
    virt = builder.virtual(n_groups)
    b_ids = builder.nodes(loc, begin, COLL_BEGIN)
    e_ids = builder.nodes(loc, end, COLL_END, priority=np.where(end <= begin, ZERO_LENGTH_END, 1))
    builder.edges(b_ids, virt[k], cross)
    builder.edges(virt[k], e_ids, cross)
    return n_groups, int((size != len(start)).sum())
