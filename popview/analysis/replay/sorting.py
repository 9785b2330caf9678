"""Edges grouped by source in the nodes' sorted order (numba counting sort):
linear, where an argsort of the sources would cost N log N."""
from __future__ import annotations

import numpy as np

from popview.jit import njit


@njit(cache=True, nogil=True)
def _position(node, rank, n_real):
    """Sorted position of a builder id; virtual ids -1, -2, ... follow the real nodes."""
    return rank[node] if node >= 0 else n_real - 1 - node


@njit(cache=True, nogil=True)
def edges_by_source(src, dst, cross, rank, n_real, n_virtual):
    """CSR by source position: (ptr, successor positions, cross flags, in-degree);
    rank maps builder ids to the positions of the n_real real nodes."""
    total = n_real + n_virtual
    ptr = np.zeros(total + 1, np.int64)
    indegree = np.zeros(total, np.int32)
    src_pos = np.empty(len(src), np.int32)
    dst_pos = np.empty(len(src), np.int32)
    for e in range(len(src)):
        src_pos[e] = _position(src[e], rank, n_real)
        dst_pos[e] = _position(dst[e], rank, n_real)
        ptr[src_pos[e] + 1] += 1
        indegree[dst_pos[e]] += 1
    for i in range(total):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    succ = np.empty(len(src), np.int32)
    out_cross = np.empty(len(src), np.bool_)
    for e in range(len(src)):
        s = src_pos[e]
        k = fill[s]
        succ[k] = dst_pos[e]
        out_cross[k] = cross[e]
        fill[s] = k + 1
    return ptr, succ, out_cross, indegree
