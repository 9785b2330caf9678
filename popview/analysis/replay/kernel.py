"""Lamport-clock propagation over the execution graph (numba kernels).

Each location advances a cursor through its nodes while their remote
dependencies are satisfied; a finished node pushes its clocks to its
successors and wakes the location of a successor that became ready, so
every node and edge is touched once. If every location waits (a cycle,
which only inconsistent records can create), the waiting node with the
earliest time is forced and counted.

Clock dimensions: 0 G-CUE, 1 G-COO, 2 G-COM (global), 3 PL-CUE (process
local: edges between processes are not followed), 4 G-IDEAL (the runtime on
an ideal network: every weight kind but MPI time).
"""
from __future__ import annotations

import numpy as np

from popview.jit import njit

N_CLOCKS = 5
G_CUE, G_COO, G_COM, PL_CUE, G_IDEAL = range(N_CLOCKS)
WEIGHT_OF_CLOCK = np.array([0, 1, 2, 0, 3], np.int64)   # CUE, COO, COM, CUE, IDEAL (weights.py)
LOCAL_CLOCK = np.array([False, False, False, True, False])


@njit(cache=True, nogil=True)
def _push(node, value, succ_ptr, succ, succ_cross, acc, came_from, pending, local_clock, n_real, loc_of, cursor,
          queued, ready, top, vstack, vtop):
    """Offer `value` (the clocks of `node`) to its successors and count the
    dependency done; a successor left waiting for nothing is a virtual node to
    fire (onto vstack) or a real one whose location may go on (onto ready).
    Returns the new (top, vtop)."""
    for e in range(succ_ptr[node], succ_ptr[node + 1]):
        s = succ[e]
        cross = succ_cross[e]
        for d in range(N_CLOCKS):
            if local_clock[d] and cross:
                continue
            if value[d] > acc[s, d]:
                acc[s, d] = value[d]
                if d == 0:
                    came_from[s] = node
        pending[s] -= 1
        if pending[s] == 0:
            if s >= n_real:
                vstack[vtop] = s
                vtop += 1
            else:
                l2 = loc_of[s]
                if cursor[l2] == s and not queued[l2]:
                    ready[top] = l2
                    top += 1
                    queued[l2] = True
    return top, vtop


@njit(cache=True, nogil=True, inline="always")
def _segment(loc, t, k, k_end, piece_b, piece_e, piece_w, done, before, seg):
    """Weighted time on `loc` since its previous node (into seg[w]): pieces
    ending by t are added to done[loc]; the piece open at t counts up to t.
    Returns the new piece cursor."""
    while k < k_end and piece_e[k] <= t:
        for w in range(seg.shape[0]):
            done[loc, w] += piece_w[k, w] * (piece_e[k] - piece_b[k])
        k += 1
    for w in range(seg.shape[0]):
        cum = done[loc, w]
        if k < k_end and piece_b[k] < t:
            cum += piece_w[k, w] * (t - piece_b[k])
        seg[w] = cum - before[loc, w]
        before[loc, w] = cum
    return k


@njit(cache=True, nogil=True)
def propagate(loc_ptr, time, copy, n_virtual, succ_ptr, succ, succ_cross, indegree, piece_ptr, piece_b, piece_e,
              piece_w, weight_of_clock, local_clock):
    """Clocks at every location's end; per-node G-CUE origin for the critical path.

    A node's own weight is the weighted time of its location's pieces
    (piece_w[k, w]: weight of piece k for weight kind w, 0 or 1) between the
    previous node of the location and itself, accumulated as the cursor
    passes. Returns (final clocks [loc, clock], came_from, forced count,
    weighted time of every piece per location and weight kind).
    """
    n_loc = len(loc_ptr) - 1
    n_real = len(time)
    total = n_real + n_virtual
    acc = np.full((total, N_CLOCKS), -1, np.int64)
    came_from = np.full(total, -1, np.int32)
    pending = indegree.copy()
    clock = np.zeros((n_loc, N_CLOCKS), np.int64)
    cursor = loc_ptr[:-1].copy()
    piece = piece_ptr[:-1].copy()
    n_w = piece_w.shape[1]
    done = np.zeros((n_loc, n_w), np.int64)
    before = np.zeros((n_loc, n_w), np.int64)
    seg = np.zeros(n_w, np.int64)
    ready = np.empty(n_loc + 1, np.int64)
    queued = np.zeros(n_loc, np.bool_)
    vstack = np.empty(max(n_virtual, 1), np.int64)
    value = np.empty(N_CLOCKS, np.int64)
    loc_of = np.empty(n_real, np.int32)
    for loc in range(n_loc):
        for n in range(loc_ptr[loc], loc_ptr[loc + 1]):
            loc_of[n] = loc
    top = 0
    for loc in range(n_loc):
        ready[top] = loc
        top += 1
        queued[loc] = True
    forced = 0
    remaining = n_real
    while remaining > 0:
        while top > 0:
            top -= 1
            loc = ready[top]
            queued[loc] = False
            while cursor[loc] < loc_ptr[loc + 1]:
                n = cursor[loc]
                if pending[n] > 0:
                    break
                piece[loc] = _segment(loc, time[n], piece[loc], piece_ptr[loc + 1], piece_b, piece_e, piece_w,
                                      done, before, seg)
                waited = indegree[n] > 0
                for d in range(N_CLOCKS):
                    local = clock[loc, d] + seg[weight_of_clock[d]]
                    remote = acc[n, d] if waited else -1
                    if copy[n] and remote >= 0:
                        value[d] = remote
                    elif remote > local:
                        value[d] = remote
                    else:
                        value[d] = local
                        if d == 0:
                            came_from[n] = -1
                    clock[loc, d] = value[d]
                cursor[loc] += 1
                remaining -= 1
                if succ_ptr[n] == succ_ptr[n + 1]:
                    continue
                # np.int64(0), not 0: numba compiled _push for the literal argument too
                top, vtop = _push(n, value, succ_ptr, succ, succ_cross, acc, came_from, pending, local_clock,
                                  n_real, loc_of, cursor, queued, ready, top, vstack, np.int64(0))
                while vtop > 0:                  # virtual nodes fire at once
                    vtop -= 1
                    v = vstack[vtop]
                    for d in range(N_CLOCKS):
                        value[d] = acc[v, d]
                    top, vtop = _push(v, value, succ_ptr, succ, succ_cross, acc, came_from, pending, local_clock,
                                      n_real, loc_of, cursor, queued, ready, top, vstack, vtop)
        if remaining == 0:
            break
        # every location waits: force the earliest waiting node
        best = -1
        for loc in range(n_loc):
            if cursor[loc] < loc_ptr[loc + 1]:
                n = cursor[loc]
                if best < 0 or time[n] < time[cursor[best]]:
                    best = loc
        pending[cursor[best]] = 0
        forced += 1
        ready[top] = best
        top += 1
        queued[best] = True
    return clock, came_from, forced, done


@njit(cache=True, nogil=True)
def backtrack(loc_ptr, time, came_from, start_node, t_start, t_stop):
    """Pieces (loc int32, begin, end, waiting bool) of the G-CUE critical path ending at
    start_node, in time order and contiguous: they cover [t_start, t_stop]."""
    pieces, m = _backtrack(loc_ptr, time, came_from, start_node, t_start, t_stop)
    pieces = pieces[m - 1::-1] if m else pieces[:0]
    return (pieces[:, 0].astype(np.int32), pieces[:, 1].copy(), pieces[:, 2].copy(),
            pieces[:, 3].astype(np.bool_))


@njit(cache=True, nogil=True)
def _backtrack(loc_ptr, time, came_from, start_node, t_start, t_stop):
    """backtrack()'s pieces from the last, as rows (loc, begin, end, waiting) of one int64
    array grown in place (four arrays of three types compiled a growing helper six times
    and their reversal at first use: 0.9 s), and their count.

    Walking back from the end, a node whose clock came from its own location
    adds the time since that location's previous node; a node whose clock
    came from another location (a message, a collective, a fork, a barrier)
    adds, on its own location, the time from that dependency to itself as
    *waiting* (what the ideal network removes), and the path goes on at the
    dependency. A dependency stamped after the node waiting for it
    (inconsistent records) is not followed, so the path never runs backwards.
    """
    n_real = len(time)
    out = np.empty((1024, 4), np.int64)
    loc_of = np.empty(n_real, np.int32)
    for loc in range(len(loc_ptr) - 1):
        for n in range(loc_ptr[loc], loc_ptr[loc + 1]):
            loc_of[n] = loc
    m = 0
    n = start_node
    steps = 0
    while n >= 0 and steps <= 2 * n_real + 2:
        steps += 1
        loc = loc_of[n]
        src = came_from[n]
        hops = 0
        while src >= n_real and hops <= n_real:      # virtual nodes: go on at their contributor
            src = came_from[src]
            hops += 1
        waiting = src >= 0 and src < n_real and time[src] <= time[n]
        first = n == loc_ptr[loc]
        if waiting:
            b = time[src]
        else:
            b = t_start if first else time[n - 1]
        e = min(time[n], t_stop)
        b = max(b, t_start)
        if e > b:
            if m > 0 and out[m - 1, 0] == loc and out[m - 1, 3] == waiting and out[m - 1, 1] == e:
                out[m - 1, 1] = b
            else:
                if m == out.shape[0]:
                    bigger = np.empty((2 * m, 4), np.int64)
                    for r in range(m):      # not bigger[:m] = out: a slice assignment compiles numba's shape checks
                        for c in range(4):
                            bigger[r, c] = out[r, c]
                    out = bigger
                out[m, 0] = loc
                out[m, 1] = b
                out[m, 2] = e
                out[m, 3] = waiting
                m += 1
        if waiting:
            n = src
        else:
            n = -1 if first else n - 1
    return out, m
