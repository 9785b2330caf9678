"""Kernels of the staging of appended records (numba; imported only when converting)."""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def scan_chunk(locs, times, prev, check_times):
    """One pass over an appended chunk: rows per location, whether locations never
    decrease, the largest time and, when check_times, whether times never
    decrease per location, continuing from prev (each location's last time,
    updated)."""
    counts = np.zeros(len(prev), np.int64)
    in_order = True
    times_ok = check_times
    t_max = np.iinfo(np.int64).min
    for i in range(len(locs)):
        loc = locs[i]
        counts[loc] += 1
        if i and loc < locs[i - 1]:
            in_order = False
        t = times[i]
        if t > t_max:
            t_max = t
        if times_ok:
            if t < prev[loc]:
                times_ok = False
            else:
                prev[loc] = t
    return counts, in_order, times_ok, t_max


@numba.njit(cache=True, nogil=True)
def location_order(locs, counts):
    """Stable order by location (a counting sort): rows of each location in
    arrival order, locations ascending."""
    cursor = np.empty(len(counts), np.int64)
    acc = 0
    for k in range(len(counts)):
        cursor[k] = acc
        acc += counts[k]
    order = np.empty(len(locs), np.int64)
    for i in range(len(locs)):
        order[cursor[locs[i]]] = i
        cursor[locs[i]] += 1
    return order


@numba.njit(cache=True, nogil=True)
def concat_runs(src, starts, lengths, out):
    """out = src[starts[0]:+lengths[0]] + src[starts[1]:+lengths[1]] + ..."""
    pos = 0
    for r in range(len(starts)):
        n = lengths[r]
        out[pos:pos + n] = src[starts[r]:starts[r] + n]
        pos += n
