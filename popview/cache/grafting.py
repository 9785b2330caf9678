"""OpenMP worker threads' visits below the parallel region their master opened.

Extrae records a worker thread's part of a parallel region as visits of the
outlined function alone, with nothing of the master's call stack: built as
they come, these visits would hang at the root of the call tree, apart from
the region. Cube and Score-P give a worker's time to the call path of the
parallel region, and so does this pass: every top-level visit of a worker
(a thread of a process other than its first one) that belongs to a parallel
region instance of its master is grafted below the master's call path of
that region, and the visits nested in it follow.

The instance of a worker's top-level visit is the master's first outermost
parallel-construct visit ending after the visit begins (a worker may begin
before its master's enter is stamped), if the visit overlaps it or is OpenMP
work (an outlined function, a task, a construct). A worker that records the
parallel construct itself is grafted beside its master's visit of it, under
the same call path. Nested parallel regions hang below the outermost one.
Threads of processes without parallel constructs (pthreads) stay as they are.

Everything is numpy over the visits; the loops run over processes and
call-path levels."""
from __future__ import annotations

import numpy as np

from popview.model.definitions import Definitions


def graft_workers(parts: list[dict], parent: np.ndarray, region: np.ndarray,
                  defs: Definitions) -> tuple[np.ndarray, np.ndarray, int]:
    """Rewrites the "callpath" column of the visit `parts` (each sorted by location then
    begin, parents first, whole locations) in place; returns the call-path table (parent,
    region) without the call paths no visit uses any more, and the number of top-level
    worker visits grafted."""
    parent = np.asarray(parent, np.int64)
    region = np.asarray(region, np.int64)
    n_cp = len(parent)
    n_loc = max([defs.n_locations] + [int(p["loc"].max()) + 1 for p in parts if len(p["loc"])])
    master = _masters(defs, n_loc)
    parallel, openmp_work = _region_kinds(defs, int(region.max(initial=-1)) + 1)
    inst = _instances(parts, master, parallel[region] if n_cp else np.zeros(0, bool))
    unchanged = parent.astype(np.int32), region.astype(np.int32), 0
    if not len(inst["end"]):
        return unchanged
    anchors = [_anchors(p, master, inst, parent, region, openmp_work) for p in parts]
    grafted = sum(int(((a >= 0) & (p["depth"] == 0)).sum()) for a, p in zip(anchors, parts))
    if not grafted:
        return unchanged
    keys = np.unique(np.concatenate([a[a >= 0] * n_cp + p["callpath"][a >= 0] for a, p in zip(anchors, parts)]))
    new_of_key, parent, region = _grafted_paths(keys // n_cp, keys % n_cp, parent, region)
    for a, p in zip(anchors, parts):
        sel = a >= 0
        p["callpath"][sel] = new_of_key[np.searchsorted(keys, a[sel] * n_cp + p["callpath"][sel])]
    parent, region, renumber = _compact(parts, parent, region)
    for p in parts:
        p["callpath"][:] = renumber[p["callpath"]]
    return parent.astype(np.int32), region.astype(np.int32), grafted


def _masters(defs: Definitions, n_loc: int) -> np.ndarray:
    """Per location, the first thread of its process (-1: not a thread)."""
    out = np.full(n_loc, -1, np.int64)
    first: dict[int, tuple[int, int]] = {}
    for i, loc in enumerate(defs.locations):
        if loc.kind == "thread" and (loc.process not in first or loc.thread < first[loc.process][0]):
            first[loc.process] = (loc.thread, i)
    for i, loc in enumerate(defs.locations):
        if loc.kind == "thread":
            out[i] = first[loc.process][1]
    return out


def _region_kinds(defs: Definitions, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per region: a parallel construct; OpenMP work (a construct, an outlined function, a task)."""
    regions = defs.regions[:n]
    parallel = np.array([r.paradigm == "openmp" and r.role == "parallel" for r in regions] + [False] * (n - len(regions)),
                        bool)
    work = np.array([r.paradigm == "openmp" or r.role in ("outlined", "task") for r in regions]
                    + [False] * (n - len(regions)), bool)
    return parallel, work


def _instances(parts: list[dict], master: np.ndarray, parallel_cp: np.ndarray) -> dict[str, np.ndarray]:
    """The masters' outermost parallel-construct visits, sorted by (master location, begin)."""
    cols = {k: [] for k in ("loc", "begin", "end", "callpath")}
    for p in parts:
        loc = p["loc"].astype(np.int64)
        sel = (master[loc] == loc) & parallel_cp[p["callpath"]] if len(loc) else np.zeros(0, bool)
        for k in cols:
            cols[k].append(p[k][sel].astype(np.int64))
    c = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in cols.items()}
    keep = np.zeros(len(c["loc"]), bool)
    bounds = np.flatnonzero(np.r_[True, c["loc"][1:] != c["loc"][:-1], True]) if len(c["loc"]) else []
    for lo, hi in zip(bounds[:-1], bounds[1:]):        # one master at a time
        ends = np.maximum.accumulate(c["end"][lo:hi])
        keep[lo] = True
        keep[lo + 1:hi] = c["begin"][lo + 1:hi] >= ends[:-1]
    return {k: v[keep] for k, v in c.items()}


def _anchors(part: dict, master: np.ndarray, inst: dict, parent: np.ndarray, region: np.ndarray,
             openmp_work: np.ndarray) -> np.ndarray:
    """Per visit of the part, the call path to graft it below (-1: none)."""
    loc = part["loc"].astype(np.int64)
    cp = part["callpath"].astype(np.int64)
    n = len(loc)
    out = np.full(n, -1, np.int64)
    if not n:
        return out
    top = np.flatnonzero((part["depth"] == 0) & (master[loc] >= 0) & (master[loc] != loc))
    if not len(top):
        return out
    k = _first_ending_after(inst["loc"], inst["end"], master[loc[top]], part["begin"][top].astype(np.int64))
    found = k >= 0
    top, k = top[found], k[found]
    overlaps = part["end"][top] > inst["begin"][k]
    top, k = top[overlaps | openmp_work[region[cp[top]]]], k[overlaps | openmp_work[region[cp[top]]]]
    anchor = inst["callpath"][k]
    same = region[cp[top]] == region[anchor]      # the worker's own visit of the construct: beside the master's
    anchor[same] = parent[anchor[same]]
    out[top] = anchor
    # nested visits follow their top-level visit (rows sorted by location and begin, parents first)
    enclosing = np.maximum.accumulate(np.where(part["depth"] == 0, np.arange(n), 0))
    return out[enclosing]


def _first_ending_after(i_loc, i_end, q_loc, q_time) -> np.ndarray:
    """Index of the first instance of location q_loc ending after q_time (instances sorted
    by (location, end)), or -1."""
    n_i = len(i_loc)
    loc = np.concatenate((i_loc, q_loc))
    time = np.concatenate((i_end, q_time))
    is_query = np.r_[np.zeros(n_i, np.int8), np.ones(len(q_loc), np.int8)]
    order = np.lexsort((is_query, time, loc))       # an instance ending at q_time comes before the query
    before = np.cumsum(is_query[order] == 0)         # instances up to each item, in sorted order
    pos = np.empty(len(order), np.int64)
    pos[order] = before
    k = pos[n_i:]
    ok = k < n_i
    ok[ok] = i_loc[k[ok]] == q_loc[ok]
    return np.where(ok, k, -1)


def _depths(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), np.int64)
    cur = parent.copy()
    while (cur >= 0).any():
        up = cur >= 0
        depth[up] += 1
        cur[up] = parent[cur[up]]
    return depth


def _grafted_paths(anchor: np.ndarray, old: np.ndarray, parent: np.ndarray, region: np.ndarray):
    """Call path of each (anchor, old call path): the old path's regions below the anchor,
    found in the table or added to it, level by level. Returns (new id per pair, parent, region)."""
    n_old = len(parent)
    width = int(region.max(initial=0)) + 1
    # every ancestor of a grafted call path is grafted with the same anchor
    a_all, c_all = [anchor], [old]
    a, c = anchor, old
    while len(c):
        up = parent[c] >= 0
        a, c = a[up], parent[c[up]]
        a_all.append(a)
        c_all.append(c)
    pair = np.unique(np.concatenate(a_all) * n_old + np.concatenate(c_all))
    pa, pc = pair // n_old, pair % n_old
    depth = _depths(parent)[pc]
    new_id = np.full(len(pair), -1, np.int64)
    table_key = (parent + 1) * width + region
    order = np.argsort(table_key, kind="stable")
    sorted_keys, sorted_ids = table_key[order], order.astype(np.int64)
    parents, regions = [parent], [region]
    n = n_old
    for level in range(int(depth.max(initial=-1)) + 1):
        rows = np.flatnonzero(depth == level)
        if level == 0:
            new_parent = pa[rows]
        else:
            up = np.searchsorted(pair, pa[rows] * n_old + parent[pc[rows]])
            new_parent = new_id[up]
        key = (new_parent + 1) * width + region[pc[rows]]
        at = np.minimum(np.searchsorted(sorted_keys, key), max(len(sorted_keys) - 1, 0))
        known = (sorted_keys[at] == key) if len(sorted_keys) else np.zeros(len(key), bool)
        new_id[rows[known]] = sorted_ids[at[known]]
        fresh, inverse = np.unique(key[~known], return_inverse=True)
        ids = n + np.arange(len(fresh))
        new_id[rows[~known]] = ids[inverse.ravel()]
        parents.append(fresh // width - 1)
        regions.append(fresh % width)
        n += len(fresh)
        merged = np.argsort(np.concatenate((sorted_keys, fresh)), kind="stable")
        sorted_keys = np.concatenate((sorted_keys, fresh))[merged]
        sorted_ids = np.concatenate((sorted_ids, ids))[merged]
    got = np.searchsorted(pair, anchor * n_old + old)
    return new_id[got], np.concatenate(parents), np.concatenate(regions)


def _compact(parts: list[dict], parent: np.ndarray, region: np.ndarray):
    """The call paths some visit uses, and their ancestors, renumbered in their order
    (parents stay before children). Returns (parent, region, old id -> new id)."""
    used = np.zeros(len(parent), bool)
    for p in parts:
        used[p["callpath"]] = True
    frontier = np.flatnonzero(used)
    while len(frontier):
        up = parent[frontier]
        up = up[up >= 0]
        frontier = up[~used[up]]
        used[frontier] = True
    renumber = np.cumsum(used) - 1
    kept = np.flatnonzero(used)
    new_parent = np.where(parent[kept] >= 0, renumber[np.maximum(parent[kept], 0)], -1)
    return new_parent, region[kept], renumber
