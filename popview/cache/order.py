"""Kernels of the staging of appended records (numba; imported only when converting)."""
import numpy as np

from popview.jit import njit


def _summarize_chunk_python(locs, times, top):
    """summarize_chunk by numpy (interpreted mode: the row loop in Python was 6 % of a
    21.6 k-event archive's conversion)."""
    locs, times = np.asarray(locs), np.asarray(times, np.int64)
    counts = np.bincount(locs, minlength=top).astype(np.int64)[:top] if len(locs) else np.zeros(top, np.int64)
    first = np.zeros(top, np.int64)
    last = np.zeros(top, np.int64)
    if not len(locs):
        return counts, first, last, True, True, np.iinfo(np.int64).min
    in_order = bool((locs[1:] >= locs[:-1]).all())
    order = np.arange(len(locs)) if in_order else np.argsort(locs, kind="stable")
    by_loc, t = locs[order], times[order]
    same = by_loc[1:] == by_loc[:-1]
    times_ok = bool(((t[1:] >= t[:-1]) | ~same).all())
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    ends = np.concatenate((starts[1:], [len(t)])) - 1
    first[by_loc[starts]] = t[starts]
    last[by_loc[starts]] = t[ends]
    return counts, first, last, in_order, times_ok, np.int64(times.max())


@njit(cache=True, nogil=True, python=_summarize_chunk_python)
def summarize_chunk(locs, times, top):
    """One pass over an appended chunk: rows per location, each location's first
    and last time, whether locations never decrease, whether times never
    decrease per location within the chunk, and the largest time."""
    counts = np.zeros(top, np.int64)
    first = np.zeros(top, np.int64)
    last = np.zeros(top, np.int64)
    in_order = True
    times_ok = True
    t_max = np.iinfo(np.int64).min
    for i in range(len(locs)):
        loc = locs[i]
        t = times[i]
        if counts[loc] == 0:
            first[loc] = t
        elif t < last[loc]:
            times_ok = False
        last[loc] = t
        counts[loc] += 1
        if i and loc < locs[i - 1]:
            in_order = False
        if t > t_max:
            t_max = t
    return counts, first, last, in_order, times_ok, t_max


@njit(cache=True, nogil=True)
def take(column, order):
    """column[order], without the GIL."""
    out = np.empty(len(order), column.dtype)
    for i in range(len(order)):
        out[i] = column[order[i]]
    return out


@njit(cache=True, nogil=True)
def _first_rows(counts):
    """Where each location's rows start once ordered (a counting sort's cursors)."""
    cursor = np.empty(len(counts), np.int64)
    acc = 0
    for k in range(len(counts)):
        cursor[k] = acc
        acc += counts[k]
    return cursor


@njit(cache=True, nogil=True)
def location_order(locs, counts):
    """Stable order by location (a counting sort): rows of each location in
    arrival order, locations ascending."""
    cursor = _first_rows(counts)
    order = np.empty(len(locs), np.int64)
    for i in range(len(locs)):
        order[cursor[locs[i]]] = i
        cursor[locs[i]] += 1
    return order


@njit(cache=True, nogil=True)
def order_three(locs, counts, a, b, c):
    """Three columns stably ordered by location in one pass, each row written to its
    place (a counting sort): 2.5x faster than location_order and three takes, for the
    tables of three columns besides the location (states, events)."""
    cursor = _first_rows(counts)
    out_a = np.empty(len(locs), a.dtype)
    out_b = np.empty(len(locs), b.dtype)
    out_c = np.empty(len(locs), c.dtype)
    for i in range(len(locs)):
        dst = cursor[locs[i]]
        cursor[locs[i]] = dst + 1
        out_a[dst] = a[i]
        out_b[dst] = b[i]
        out_c[dst] = c[i]
    return out_a, out_b, out_c


_SAME_WIDTH = {8: np.dtype(np.int64), 4: np.dtype(np.int32)}


def concat_runs(src, starts, lengths, out) -> None:
    """out = src[starts[0]:+lengths[0]] + src[starts[1]:+lengths[1]] + ...: a copy of the
    items' bytes, so items of 8 (4) bytes of any type go through the int64 (int32) kernel
    (float64 columns compiled a third kernel at first use)."""
    src, out = _same_width(src, out)
    _concat_runs(src, starts, lengths, out)


def _concat_runs_python(src, starts, lengths, out):
    """_concat_runs as slice copies (interpreted mode: element loops in Python cost 1.4 ms a
    read of an 8.6 k-event archive's small tables)."""
    pos = 0
    for first, n in zip(starts.tolist(), lengths.tolist()):
        out[pos:pos + n] = src[first:first + n]
        pos += n


def _place_runs_python(src, src_starts, lengths, out, dst_starts):
    for a, n, b in zip(src_starts.tolist(), lengths.tolist(), dst_starts.tolist()):
        out[b:b + n] = src[a:a + n]


@njit(cache=True, nogil=True, python=_concat_runs_python)
def _concat_runs(src, starts, lengths, out):
    pos = 0
    for r in range(len(starts)):        # element loops: a slice copy compiles numba's shape checks (seconds)
        first = starts[r]
        for k in range(lengths[r]):
            out[pos + k] = src[first + k]
        pos += lengths[r]


def place_runs(src, src_starts, lengths, out, dst_starts) -> None:
    """out[dst_starts[r]:+lengths[r]] = src[src_starts[r]:+lengths[r]] for every run r
    (items of 8 or 4 bytes through the int64 / int32 kernel, as concat_runs)."""
    src, out = _same_width(src, out)
    _place_runs(src, src_starts, lengths, out, dst_starts)


def _same_width(src, out):
    """`src` and `out` viewed as the integers of their items' width, when they share a type
    of 8 or 4 bytes: one compiled kernel a width."""
    same = _SAME_WIDTH.get(src.dtype.itemsize)
    if same is not None and src.dtype == out.dtype:
        return src.view(same), out.view(same)
    return src, out


@njit(cache=True, nogil=True, python=_place_runs_python)
def _place_runs(src, src_starts, lengths, out, dst_starts):
    for r in range(len(src_starts)):
        a = src_starts[r]
        b = dst_starts[r]
        for k in range(lengths[r]):
            out[b + k] = src[a + k]
