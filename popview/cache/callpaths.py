"""Call-path intervals from enter/leave streams (numba kernel).

Both formats reduce to the same input: per location, time-ordered region
events where a non-negative region id enters and -1 leaves the innermost
open region of the same event type. The output is one interval per visit
(loc, begin, end, callpath, depth) plus the call-path table.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.typed import Dict, List

LEAVE = -1


@numba.njit(cache=True)
def _build(loc, time, etype, region, t_end, keys, cp_parent, cp_region):
    n = len(loc)
    out_loc = np.empty(n, np.int32)
    out_begin = np.empty(n, np.int64)
    out_end = np.empty(n, np.int64)
    out_cp = np.empty(n, np.int32)
    out_depth = np.empty(n, np.int16)
    stack_cp = np.empty(256, np.int32)
    stack_begin = np.empty(256, np.int64)
    stack_type = np.empty(256, np.int32)
    stack_slot = np.empty(256, np.int64)
    depth = 0
    m = 0
    unmatched = 0
    cur = -1
    for i in range(n + 1):
        if i == n or loc[i] != cur:
            while depth > 0:  # close what is still open at the end of the location
                depth -= 1
                out_end[stack_slot[depth]] = t_end
            if i == n:
                break
            cur = loc[i]
        r = region[i]
        if r >= 0:
            parent = stack_cp[depth - 1] if depth > 0 else -1
            key = (np.int64(parent) + 1) * 4294967296 + r
            cp = keys.get(key, np.int32(-1))
            if cp < 0:
                cp = np.int32(len(cp_parent))
                keys[key] = cp
                cp_parent.append(np.int32(parent))
                cp_region.append(np.int32(r))
            if depth == len(stack_cp):
                stack_cp = np.concatenate((stack_cp, np.empty(depth, np.int32)))
                stack_begin = np.concatenate((stack_begin, np.empty(depth, np.int64)))
                stack_type = np.concatenate((stack_type, np.empty(depth, np.int32)))
                stack_slot = np.concatenate((stack_slot, np.empty(depth, np.int64)))
            stack_cp[depth] = cp
            stack_begin[depth] = time[i]
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
    return out_loc[:m], out_begin[:m], out_end[:m], out_cp[:m], out_depth[:m], unmatched


class CallPathBuilder:
    """Keeps the call-path table across location groups of one conversion."""

    def __init__(self):
        self.keys = Dict.empty(key_type=types.int64, value_type=types.int32)
        self.parent = List.empty_list(types.int32)
        self.region = List.empty_list(types.int32)
        self.unmatched = 0

    def build(self, loc, time, etype, region, t_end: int) -> dict[str, np.ndarray]:
        """Intervals of one batch of whole locations, sorted by (loc, begin)."""
        if len(loc) == 0:
            return {"loc": np.zeros(0, np.int32), "begin": np.zeros(0, np.int64), "end": np.zeros(0, np.int64),
                    "callpath": np.zeros(0, np.int32), "depth": np.zeros(0, np.int16)}
        l, b, e, cp, d, unmatched = _build(
            np.ascontiguousarray(loc, np.int32), np.ascontiguousarray(time, np.int64),
            np.ascontiguousarray(etype, np.int32), np.ascontiguousarray(region, np.int32),
            np.int64(t_end), self.keys, self.parent, self.region)
        self.unmatched += unmatched
        return {"loc": l, "begin": b, "end": e, "callpath": cp, "depth": d}

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.parent, dtype=np.int32), np.array(self.region, dtype=np.int32)
