"""Call-path intervals from enter/leave streams (numba kernel).

Both formats reduce to the same input: per location, time-ordered region
events where a non-negative region id enters and -1 leaves the innermost
open region of the same event type. The output is one interval per visit
(loc, begin, end, callpath, depth) plus the call-path table.
"""
from __future__ import annotations

import numpy as np

from popview.jit import njit

LEAVE = -1
EMPTY = -1      # a free slot of the (parent, region) -> call path hash table


@njit(cache=True, nogil=True)
def _build(loc, time, etype, region, t_end, h_keys, h_vals, cp_parent, cp_region, n_cp):
    """The visits of a batch; new call paths are added to the table (whose arrays
    the caller sized for every enter of the batch) and their count returned."""
    n = len(loc)
    mask = len(h_keys) - 1
    out_loc = np.empty(n, np.int32)
    out_begin = np.empty(n, np.int64)
    out_end = np.empty(n, np.int64)
    out_cp = np.empty(n, np.int32)
    out_depth = np.empty(n, np.int16)
    # never deeper than the enters; pages beyond the depth are never touched, and growing
    # arrays inside the loop would slow all of it
    stack_cp = np.empty(n + 1, np.int32)
    stack_type = np.empty(n + 1, np.int32)
    stack_slot = np.empty(n + 1, np.int64)
    depth = 0
    m = 0
    unmatched = 0
    unclosed = 0
    open_cp = np.empty(n, np.int32)     # call paths of the visits closed without their own exit record
    cur = -1
    for i in range(n + 1):
        if i == n or loc[i] != cur:
            while depth > 0:  # close what is still open at the end of the location
                depth -= 1
                out_end[stack_slot[depth]] = t_end
                open_cp[unclosed] = out_cp[stack_slot[depth]]
                unclosed += 1
            if i == n:
                break
            cur = loc[i]
        r = region[i]
        if r >= 0:
            parent = stack_cp[depth - 1] if depth > 0 else -1
            key = (np.int64(parent) + 1) * 4294967296 + r
            slot = _slot(key, mask)
            while h_keys[slot] != EMPTY and h_keys[slot] != key:
                slot = (slot + 1) & mask
            if h_keys[slot] == key:
                cp = h_vals[slot]
            else:
                cp = np.int32(n_cp)
                h_keys[slot] = key
                h_vals[slot] = cp
                cp_parent[n_cp] = parent
                cp_region[n_cp] = r
                n_cp += 1
            stack_cp[depth] = cp
            stack_type[depth] = etype[i]
            stack_slot[depth] = m
            out_loc[m] = cur
            out_begin[m] = time[i]
            out_end[m] = time[i]
            out_cp[m] = cp
            out_depth[m] = depth
            m += 1
            depth += 1
        else:
            k = depth - 1
            while k >= 0 and stack_type[k] != etype[i]:
                k -= 1
            if k < 0:
                unmatched += 1
                continue
            while depth > k:
                depth -= 1
                out_end[stack_slot[depth]] = time[i]
                if depth > k:               # no exit of its own: closed by an enclosing region's
                    open_cp[unclosed] = out_cp[stack_slot[depth]]
                    unclosed += 1
    return out_loc[:m], out_begin[:m], out_end[:m], out_cp[:m], out_depth[:m], unmatched, open_cp[:unclosed], n_cp


@njit(cache=True, nogil=True)
def _slot(key, mask):
    return ((key * 0x9E3779B97F4A7C15) >> 17) & mask


@njit(cache=True)
def _rehash(h_keys, h_vals, capacity):
    keys = np.full(capacity, EMPTY, np.int64)
    vals = np.empty(capacity, np.int32)
    mask = capacity - 1
    for i in range(len(h_keys)):
        if h_keys[i] != EMPTY:
            slot = _slot(h_keys[i], mask)
            while keys[slot] != EMPTY:
                slot = (slot + 1) & mask
            keys[slot] = h_keys[i]
            vals[slot] = h_vals[i]
    return keys, vals


class CallPathBuilder:
    """Keeps the call-path table across location groups of one conversion
    (numpy arrays and an open-addressing hash table: numba's typed containers
    would cost seconds of compilation in every process)."""

    def __init__(self):
        self.h_keys = np.full(1024, EMPTY, np.int64)
        self.h_vals = np.empty(1024, np.int32)
        self.parent = np.empty(0, np.int32)
        self.region = np.empty(0, np.int32)
        self.n = 0
        self.unmatched = 0
        self.unclosed: list[np.ndarray] = []    # call paths of visits closed without their own exit

    def build(self, loc, time, etype, region, t_end: int) -> dict[str, np.ndarray]:
        """Intervals of one batch of whole locations, sorted by (loc, begin)."""
        if len(loc) == 0:
            return {"loc": np.zeros(0, np.int32), "begin": np.zeros(0, np.int64), "end": np.zeros(0, np.int64),
                    "callpath": np.zeros(0, np.int32), "depth": np.zeros(0, np.int16)}
        self._reserve(int(np.count_nonzero(np.asarray(region) >= 0)))
        l, b, e, cp, d, unmatched, unclosed, self.n = _build(
            np.ascontiguousarray(loc, np.int32), np.ascontiguousarray(time, np.int64),
            np.ascontiguousarray(etype, np.int32), np.ascontiguousarray(region, np.int32),
            np.int64(t_end), self.h_keys, self.h_vals, self.parent, self.region, self.n)
        self.unmatched += unmatched
        if len(unclosed):
            self.unclosed.append(unclosed)
        return {"loc": l, "begin": b, "end": e, "callpath": cp, "depth": d}

    def _reserve(self, new: int) -> None:
        """Room for `new` more call paths, the hash table at most half full."""
        need = self.n + new
        if need > len(self.parent):
            self.parent = np.concatenate((self.parent[:self.n], np.empty(need - self.n, np.int32)))
            self.region = np.concatenate((self.region[:self.n], np.empty(need - self.n, np.int32)))
        capacity = len(self.h_keys)
        while capacity < 2 * need:
            capacity *= 2
        if capacity != len(self.h_keys):
            self.h_keys, self.h_vals = _rehash(self.h_keys, self.h_vals, capacity)

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        return self.parent[:self.n].copy(), self.region[:self.n].copy()
