"""Counting sort of the graph's edges by source (numba): linear, where an
argsort of the sources would cost N log N."""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def edges_by_source(src, dst, cross, total):
    """CSR of edges grouped by source: (ptr, successors, cross flags)."""
    ptr = np.zeros(total + 1, np.int64)
    for s in src:
        ptr[s + 1] += 1
    for i in range(total):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    succ = np.empty(len(src), np.int64)
    out_cross = np.empty(len(src), np.bool_)
    for e in range(len(src)):
        k = fill[src[e]]
        succ[k] = dst[e]
        out_cross[k] = cross[e]
        fill[src[e]] = k + 1
    return ptr, succ, out_cross
