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
    # one part at a time, and only its grafted rows: (top-level row, anchor) kept, the nested rows found again
    tops = [_anchors(p, master, inst, parent, region, openmp_work) for p in parts]
    grafted = sum(len(t) for t, _ in tops)
    if not grafted:
        return unchanged
    keys = np.unique(np.concatenate([np.unique(_keys(p, *_graft_rows(p, t, a), n_cp)) for (t, a), p in zip(tops, parts)]))
    new_of_key, parent, region = _grafted_paths(keys // n_cp, keys % n_cp, parent, region)
    new_of_key = new_of_key.astype(np.int32)
    for (t, a), p in zip(tops, parts):
        rows, anchor = _graft_rows(p, t, a)
        p["callpath"][rows] = new_of_key[np.searchsorted(keys, _keys(p, rows, anchor, n_cp))]
    parent, region, renumber = _compact(parts, parent, region)
    renumber = renumber.astype(np.int32)
    for p in parts:
        cp = p["callpath"]
        for lo in range(0, len(cp), CHUNK):
            cp[lo:lo + CHUNK] = renumber[cp[lo:lo + CHUNK]]
    return parent.astype(np.int32), region.astype(np.int32), grafted


CHUNK = 1 << 20     # rows renumbered at a time


def _index_type(n: int):
    return np.int32 if n < 2 ** 31 else np.int64


def _graft_rows(part: dict, top: np.ndarray, anchor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows grafted with the top-level rows `top` (sorted) and the anchor of each: a
    top-level row and the nested rows after it (rows sorted by location and begin, parents
    first), up to the next top-level row."""
    n = len(part["depth"])
    itype = _index_type(n)
    length = _span_ends(part["depth"], top).astype(itype) - top
    total = int(length.sum())
    shift = np.repeat(top - (np.cumsum(length) - length), length)
    rows = np.arange(total, dtype=itype)
    rows += shift.astype(itype, copy=False)
    return rows, np.repeat(anchor, length)


def _span_ends(depth: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Per row of `top` (sorted), the next top-level row after it (or the end), CHUNK rows at a time."""
    ends = np.full(len(top), len(depth), np.int64)
    pending = 0                          # tops before it have their end
    for lo in range(0, len(depth), CHUNK):
        starts = np.flatnonzero(depth[lo:lo + CHUNK] == 0) + lo
        if not len(starts):
            continue
        upto = int(np.searchsorted(top, lo + CHUNK))
        nxt = np.searchsorted(starts, top[pending:upto], side="right")
        found = int((nxt < len(starts)).sum())     # a prefix: the tops are sorted
        ends[pending:pending + found] = starts[nxt[:found]]
        pending += found
    return ends


def _rows_where(part: dict, test) -> np.ndarray:
    """The rows of the part where test(columns) holds, CHUNK rows at a time."""
    n = len(part["loc"])
    got = [np.flatnonzero(test({k: v[lo:lo + CHUNK] for k, v in part.items()})) + lo for lo in range(0, n, CHUNK)]
    return np.concatenate(got) if got else np.zeros(0, np.int64)


def _keys(part: dict, rows: np.ndarray, anchor: np.ndarray, n_cp: int) -> np.ndarray:
    """(anchor, old call path) of the rows as one int64 each."""
    key = anchor.astype(np.int64)
    key *= n_cp
    key += part["callpath"][rows]
    return key


def _masters(defs: Definitions, n_loc: int) -> np.ndarray:
    """Per location, the first thread of its process (-1: not a thread)."""
    out = np.full(n_loc, -1, np.int32)
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
        sel = _rows_where(p, lambda c: (master[c["loc"]] == c["loc"]) & parallel_cp[c["callpath"]])
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
             openmp_work: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The part's top-level rows to graft (sorted) and the call path to graft each below,
    CHUNK rows at a time."""
    itype = _index_type(len(part["loc"]))
    tops, anchors = [np.zeros(0, itype)], [np.zeros(0, np.int32)]
    for lo in range(0, len(part["loc"]), CHUNK):
        c = {k: v[lo:lo + CHUNK] for k, v in part.items()}
        top = np.flatnonzero((c["depth"] == 0) & (master[c["loc"]] >= 0) & (master[c["loc"]] != c["loc"]))
        k = _first_ending_after(inst["loc"], inst["end"], master[c["loc"][top]], c["begin"][top])
        found = k >= 0
        top, k = top[found], k[found]
        cp = c["callpath"][top]
        keep = (c["end"][top] > inst["begin"][k]) | openmp_work[region[cp]]
        top, k, cp = top[keep], k[keep], cp[keep]
        anchor = inst["callpath"][k]
        same = region[cp] == region[anchor]      # the worker's own visit of the construct: beside the master's
        anchor[same] = parent[anchor[same]]
        top, anchor = top[anchor >= 0], anchor[anchor >= 0]     # a construct at the root: stays
        tops.append((top + lo).astype(itype))
        anchors.append(anchor.astype(np.int32))
    return np.concatenate(tops), np.concatenate(anchors)


def _first_ending_after(i_loc, i_end, q_loc, q_time) -> np.ndarray:
    """Index of the first instance of location q_loc ending after q_time (instances sorted
    by (location, end)), or -1: a bisection of each query's location's instances."""
    lo = np.searchsorted(i_loc, q_loc, side="left")
    hi = np.searchsorted(i_loc, q_loc, side="right")
    end = hi.copy()
    while True:
        open_ = lo < hi
        if not open_.any():
            break
        mid = (lo + hi) // 2
        after = np.zeros(len(mid), bool)
        after[open_] = i_end[mid[open_]] > q_time[open_]    # an instance ending at q_time is not after it
        hi = np.where(open_ & after, mid, hi)
        lo = np.where(open_ & ~after, mid + 1, lo)
    return np.where(lo < end, lo, -1)


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
