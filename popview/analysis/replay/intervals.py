"""Per-location interval algebra for the replay (numba kernels).

Interval lists are CSR by location: rows of location l are ptr[l]:ptr[l+1],
sorted by begin and disjoint within a location. Kernels merge such lists in
one pass, so masking the states by a focus or cutting the critical path by
call paths costs O(rows), never a Python loop per record.
"""
from __future__ import annotations

import numpy as np

from popview.jit import njit


def csr(loc: np.ndarray, n_loc: int) -> np.ndarray:
    """Row pointers of rows already sorted by location."""
    ptr = np.zeros(n_loc + 1, np.int64)
    np.cumsum(np.bincount(loc, minlength=n_loc)[:n_loc], out=ptr[1:])
    return ptr


@njit(cache=True, nogil=True)
def intersect(a_ptr, a_b, a_e, b_ptr, b_b, b_e):
    """Pieces of A ∩ B per location: (ptr, begin, end, index in A, index in B)."""
    n_loc = len(a_ptr) - 1
    cap = len(a_b) + len(b_b) + 1
    out_b = np.empty(cap, np.int64)
    out_e = np.empty(cap, np.int64)
    out_ia = np.empty(cap, np.int64)
    out_ib = np.empty(cap, np.int64)
    ptr = np.zeros(n_loc + 1, np.int64)
    m = 0
    for loc in range(n_loc):
        i, i1 = a_ptr[loc], a_ptr[loc + 1]
        j, j1 = b_ptr[loc], b_ptr[loc + 1]
        while i < i1 and j < j1:
            lo = max(a_b[i], b_b[j])
            hi = min(a_e[i], b_e[j])
            if hi > lo:
                out_b[m] = lo
                out_e[m] = hi
                out_ia[m] = i
                out_ib[m] = j
                m += 1
            if a_e[i] < b_e[j]:
                i += 1
            else:
                j += 1
        ptr[loc + 1] = m
    return ptr, out_b[:m].copy(), out_e[:m].copy(), out_ia[:m].copy(), out_ib[:m].copy()


@njit(cache=True, nogil=True)
def intersect_weighted(a_ptr, a_b, a_e, a_w, b_ptr, b_b, b_e):
    """Pieces of A ∩ B per location, A's zero-weight rows left out: (ptr, begin, end)."""
    n_loc = len(a_ptr) - 1
    cap = len(b_b) + 1
    for loc in range(n_loc):
        cap += a_ptr[loc + 1] - a_ptr[loc] if b_ptr[loc + 1] > b_ptr[loc] else 0
    out_b = np.empty(cap, np.int64)
    out_e = np.empty(cap, np.int64)
    ptr = np.zeros(n_loc + 1, np.int64)
    m = 0
    for loc in range(n_loc):
        i, i1 = a_ptr[loc], a_ptr[loc + 1]
        j, j1 = b_ptr[loc], b_ptr[loc + 1]
        while i < i1 and j < j1:
            if a_w[i] > 0:
                lo = max(a_b[i], b_b[j])
                hi = min(a_e[i], b_e[j])
                if hi > lo:
                    out_b[m] = lo
                    out_e[m] = hi
                    m += 1
            if a_e[i] < b_e[j]:
                i += 1
            else:
                j += 1
        ptr[loc + 1] = m
    return ptr, out_b[:m].copy(), out_e[:m].copy()


@njit(cache=True, nogil=True)
def subtract(a_ptr, a_b, a_e, b_ptr, b_b, b_e):
    """Pieces of A less B per location (both sorted and disjoint within a location):
    (ptr, begin, end, index in A)."""
    n_loc = len(a_ptr) - 1
    cap = len(a_b) + len(b_b) + 1
    out_b = np.empty(cap, np.int64)
    out_e = np.empty(cap, np.int64)
    out_ia = np.empty(cap, np.int64)
    ptr = np.zeros(n_loc + 1, np.int64)
    m = 0
    for loc in range(n_loc):
        j, j1 = b_ptr[loc], b_ptr[loc + 1]
        for i in range(a_ptr[loc], a_ptr[loc + 1]):
            while j < j1 and b_e[j] <= a_b[i]:
                j += 1
            cur = a_b[i]
            k = j
            while k < j1 and b_b[k] < a_e[i]:
                if b_b[k] > cur:
                    out_b[m] = cur
                    out_e[m] = b_b[k]
                    out_ia[m] = i
                    m += 1
                cur = max(cur, b_e[k])
                k += 1
            if cur < a_e[i]:
                out_b[m] = cur
                out_e[m] = a_e[i]
                out_ia[m] = i
                m += 1
        ptr[loc + 1] = m
    return ptr, out_b[:m].copy(), out_e[:m].copy(), out_ia[:m].copy()


@njit(cache=True, nogil=True)
def merge_overlaps(ptr, b, e):
    """Union of possibly overlapping intervals (sorted by begin) per location."""
    n_loc = len(ptr) - 1
    out_b = np.empty(len(b), np.int64)
    out_e = np.empty(len(b), np.int64)
    out_ptr = np.zeros(n_loc + 1, np.int64)
    m = 0
    for loc in range(n_loc):
        first = m
        for i in range(ptr[loc], ptr[loc + 1]):
            if m > first and b[i] <= out_e[m - 1]:
                if e[i] > out_e[m - 1]:
                    out_e[m - 1] = e[i]
            else:
                out_b[m] = b[i]
                out_e[m] = e[i]
                m += 1
        out_ptr[loc + 1] = m
    return out_ptr, out_b[:m].copy(), out_e[:m].copy()


@njit(cache=True, nogil=True)
def leaves(ptr, begin, end, callpath):
    """Innermost call path per time: nested calls -> disjoint (begin, end, callpath)."""
    n_loc = len(ptr) - 1
    cap = 2 * len(begin) + 1
    out_b = np.empty(cap, np.int64)
    out_e = np.empty(cap, np.int64)
    out_cp = np.empty(cap, np.int32)
    out_ptr = np.zeros(n_loc + 1, np.int64)
    st_end = np.empty(4096, np.int64)
    st_cp = np.empty(4096, np.int32)
    m = 0
    for loc in range(n_loc):
        top = 0
        t = np.int64(-(2 ** 62))
        for i in range(ptr[loc], ptr[loc + 1] + 1):
            nxt = begin[i] if i < ptr[loc + 1] else np.int64(2 ** 62)
            # close the open calls that end before the next call begins
            while top > 0 and st_end[top - 1] <= nxt:
                if st_end[top - 1] > t:
                    out_b[m] = t
                    out_e[m] = st_end[top - 1]
                    out_cp[m] = st_cp[top - 1]
                    m += 1
                    t = st_end[top - 1]
                top -= 1
            if i == ptr[loc + 1]:
                break
            if top > 0 and nxt > t:
                out_b[m] = t
                out_e[m] = nxt
                out_cp[m] = st_cp[top - 1]
                m += 1
            t = max(t, nxt)
            if top < len(st_end):
                st_end[top] = end[i]
                st_cp[top] = callpath[i]
                top += 1
        out_ptr[loc + 1] = m
    return out_ptr, out_b[:m].copy(), out_e[:m].copy(), out_cp[:m].copy()


@njit(cache=True, nogil=True)
def with_gaps(ptr, begin, end, selected, t_end):
    """The rows plus, on the selected locations, a row for every stretch of
    [0, t_end] no row covers: (ptr, begin, end, source row or -1 for a gap)."""
    n_loc = len(ptr) - 1
    cap = len(begin) + 1
    for loc in range(n_loc):
        if selected[loc]:
            cap += ptr[loc + 1] - ptr[loc] + 1
    out_b = np.empty(cap, np.int64)
    out_e = np.empty(cap, np.int64)
    src = np.empty(cap, np.int64)
    out_ptr = np.zeros(n_loc + 1, np.int64)
    m = 0
    for loc in range(n_loc):
        covered = np.int64(0)
        for i in range(ptr[loc], ptr[loc + 1]):
            if selected[loc] and begin[i] > covered:
                out_b[m] = covered
                out_e[m] = begin[i]
                src[m] = -1
                m += 1
            out_b[m] = begin[i]
            out_e[m] = end[i]
            src[m] = i
            m += 1
            covered = max(covered, end[i])
        if selected[loc] and t_end > covered:
            out_b[m] = covered
            out_e[m] = t_end
            src[m] = -1
            m += 1
        out_ptr[loc + 1] = m
    return out_ptr, out_b[:m].copy(), out_e[:m].copy(), src[:m].copy()
