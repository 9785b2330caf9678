"""Which of a few sorted codes (counter or region event types) each event has, in one
pass (numba)."""
from __future__ import annotations

import numba
import numpy as np

# Codes spanning fewer values than this are looked up in a table of that span.
DENSE_SPAN = 1 << 16


@numba.njit(cache=True, nogil=True)
def code_index(values, codes):
    """Per value, its index in `codes` (sorted, distinct), or -1. Codes close together
    (the usual case: 42000000-42001047) are found with one load from a table; a
    bisection's unpredictable branches cost ten times more a value."""
    out = np.full(len(values), -1, np.int32)
    _index(values, codes, out)
    return out


@numba.njit(cache=True, nogil=True)
def member_rows(values, codes):
    """The rows whose value is one of `codes` (sorted, distinct), in one pass: the
    region events among all of them."""
    index = np.full(len(values), -1, np.int32)
    _index(values, codes, index)
    rows = np.empty(len(values), np.int64)
    m = 0
    for i in range(len(values)):
        rows[m] = i
        m += index[i] >= 0
    return rows[:m].copy()


@numba.njit(cache=True, nogil=True)
def _index(values, codes, out):
    if not len(codes):
        return
    lo, hi = np.int64(codes[0]), np.int64(codes[-1])
    if hi - lo < DENSE_SPAN:
        table = np.full(hi - lo + 1, -1, np.int32)
        for k in range(len(codes)):
            table[codes[k] - lo] = k
        for i in range(len(values)):
            v = np.int64(values[i])
            if lo <= v <= hi:
                out[i] = table[v - lo]
    else:
        for i in range(len(values)):
            v = np.int64(values[i])
            if lo <= v <= hi:
                k = np.searchsorted(codes, v)
                if codes[k] == v:
                    out[i] = k
