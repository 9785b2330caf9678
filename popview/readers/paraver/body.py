"""Vectorised parsing of .prv record lines (a numba kernel over raw bytes).

One call parses one block of whole lines into numpy columns: states,
events (one row per type:value pair) and messages, and counts every
problem by kind with the first line it occurred on.

The helpers the kernel calls for every field read the bytes through the
block's address, not the array (see popview.readers.rawbytes): counting the
references to the array took more than half of the parsing time.
"""
from __future__ import annotations

import numpy as np

from popview.jit import njit, refcount_free
from popview.readers.rawbytes import byte_at

# Problem kinds (index into the counters the kernel returns).
(MALFORMED, UNKNOWN_TYPE, END_BEFORE_BEGIN, UNKNOWN_LOCATION, AFTER_END, GLOBAL_COMM, OUT_OF_RANGE,
 WIDE_VALUE) = range(8)
PROBLEMS = {
    MALFORMED: "malformed record",
    UNKNOWN_TYPE: "unknown record type",
    END_BEFORE_BEGIN: "state ends before it begins",
    UNKNOWN_LOCATION: "record names an application, task or thread the header does not have",
    AFTER_END: "record after the header's end time",
    GLOBAL_COMM: "global communication record (type 4) ignored",
    OUT_OF_RANGE: "time beyond 2^62 ns (146 years), or state or event type beyond 2^31 (dropped)",
    WIDE_VALUE: "event value beyond the int64 range (that type:value pair dropped)",
}
N_PROBLEMS = len(PROBLEMS)
# Problems that drop the record (the others only warn).
DROPPING = (MALFORMED, UNKNOWN_TYPE, END_BEFORE_BEGIN, UNKNOWN_LOCATION, OUT_OF_RANGE)
MAX_DIGITS = 19              # int64's width; a 19-digit number that wrapped is caught by its sign
OVERFLOW = 10                # added to a field's terminator when its number does not fit in int64
INT32_MAX = (1 << 31) - 1

COLON, NEWLINE, CR, MINUS = 58, 10, 13, 45


@refcount_free
def _field(p, i, n):
    """Parse an integer at i of the bytes at address p. Returns (value, next index, terminator):
    terminator 1 = ':', 2 = end of line, 0 = error; OVERFLOW + 1 or 2 when the number does
    not fit in int64 (never wrapped silently: callers treat it as an error, or drop it).
    A call, not inline="always": numba would compile it again at each of its seven call
    sites (3 s at first use); LLVM inlines the call all the same."""
    neg = False
    if i < n and byte_at(p, i) == MINUS:
        neg = True
        i += 1
    start = i
    v = np.int64(0)
    while i < n:
        c = byte_at(p, i)
        if 48 <= c <= 57:
            v = v * 10 + (c - 48)
            i += 1
        else:
            break
    if i == start:
        return v, i, 0
    wide = OVERFLOW if i - start > MAX_DIGITS or v < 0 else 0
    if neg:
        v = -v
    if i >= n:
        return v, i, 2 + wide
    c = byte_at(p, i)
    if c == COLON:
        return v, i + 1, 1 + wide
    if c == NEWLINE:
        return v, i + 1, 2 + wide
    if c == CR and i + 1 < n and byte_at(p, i + 1) == NEWLINE:
        return v, i + 2, 2 + wide
    return v, i, 0


@refcount_free
def _skip_line(p, i, n):
    while i < n and byte_at(p, i) != NEWLINE:
        i += 1
    return i + 1


@refcount_free
def _location(appl, task, thread, appl_first_task, task_first_loc):
    """The location of (appl, task, thread), -1 if the header has none (a call, not inlined:
    see the module's docstring)."""
    n_appl = len(appl_first_task) - 1
    if appl < 1 or appl > n_appl:
        return -1
    t = appl_first_task[appl - 1] + task - 1
    if task < 1 or t >= appl_first_task[appl]:
        return -1
    first = task_first_loc[t]
    if thread < 1 or first + thread - 1 >= task_first_loc[t + 1]:
        return -1
    return first + thread - 1


NO_CPU_YET, SEVERAL_CPUS = -2, -1


@refcount_free
def _note_cpu(loc_cpu, loc, cpu):
    """The CPU field of a record of `loc`: kept while every record of the location has the same."""
    if loc_cpu[loc] == NO_CPU_YET:
        loc_cpu[loc] = cpu
    elif loc_cpu[loc] != cpu:
        loc_cpu[loc] = SEVERAL_CPUS


def merge_cpus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two blocks' CPUs per location (NO_CPU_YET where a block had no record of it)."""
    return np.where(a == NO_CPU_YET, b, np.where((b == NO_CPU_YET) | (a == b), a, SEVERAL_CPUS))


@njit(cache=True, nogil=True)
def parse_block(buf, line0, appl_first_task, task_first_loc, tick_ns, t_end):
    """Parse whole lines in `buf` (uint8). Times are returned in ns."""
    # times beyond 2^62 ns are refused: int64 nanoseconds with room for the sums and bin
    # edges computed from them (a time of 2^63 - 1 overflowed the timeline pyramid)
    max_tick = (1 << 62) // tick_ns
    n = len(buf)
    p = buf.ctypes.data           # buf stays referenced by the caller
    # Upper bounds first: arrays reallocated inside the loop below would make it
    # about three times slower (numba reloads and refcounts them). The count is
    # branch-free, so that it vectorises (four times faster than testing each byte);
    # communications are bounded by the lines (np.empty costs no memory until written).
    n_lines = 1
    n_colons = 0
    for k in range(n):
        c = buf[k]
        n_colons += c == COLON
        n_lines += c == NEWLINE
    n_comms = n_lines
    s_loc = np.empty(n_lines, np.int32)
    s_begin = np.empty(n_lines, np.int64)
    s_end = np.empty(n_lines, np.int64)
    s_state = np.empty(n_lines, np.int32)
    loc_cpu = np.full(task_first_loc[-1], NO_CPU_YET, np.int64)   # each location's CPU (SEVERAL_CPUS: not one)
    n_pairs = n_colons // 2 + 1                  # an event line has (colons - 5) / 2 pairs
    e_loc = np.empty(n_pairs, np.int32)
    e_time = np.empty(n_pairs, np.int64)
    e_type = np.empty(n_pairs, np.int32)
    e_value = np.empty(n_pairs, np.int64)
    c_cols = np.empty((8, n_comms), np.int64)
    c_n = 0
    problems = np.zeros(N_PROBLEMS, np.int64)
    first_line = np.full(N_PROBLEMS, -1, np.int64)
    f = np.empty(16, np.int64)
    ns = 0
    ne = 0
    n_event_records = 0
    i = np.int64(0)             # not a literal 0: _skip_line was compiled for the literal too
    line = line0
    while i < n:
        c = buf[i]
        if c == NEWLINE:
            i += 1
            line += 1
            continue
        if c == 35 or c == 99 or c == 67 or c == CR:  # '#', 'c', 'C' lines and stray CR
            i = _skip_line(p, i, n)
            line += 1
            continue
        kind = c - 48
        if not (1 <= kind <= 4) or i + 1 >= n or buf[i + 1] != COLON:
            problems[UNKNOWN_TYPE] += 1
            if first_line[UNKNOWN_TYPE] < 0:
                first_line[UNKNOWN_TYPE] = line
            i = _skip_line(p, i, n)
            line += 1
            continue
        i += 2
        # common prefix: cpu, appl, task, thread, time
        ok = True
        for k in range(5):
            v, i, term = _field(p, i, n)
            f[k] = v
            if term != 1:
                ok = False
                break
        bad = -1
        if ok:
            loc = _location(f[1], f[2], f[3], appl_first_task, task_first_loc)
            if kind == 1:
                v, i, term = _field(p, i, n)
                f[5] = v
                if term == 1:
                    v, i, term = _field(p, i, n)
                    f[6] = v
                else:
                    term = 0
                end = t_end if f[5] == -1 else f[5]
                if term != 2 or f[4] < 0:
                    bad = MALFORMED
                elif loc < 0:
                    bad = UNKNOWN_LOCATION
                elif f[4] > max_tick or end > max_tick or f[6] < 0 or f[6] > INT32_MAX:
                    bad = OUT_OF_RANGE
                else:
                    if end < f[4]:
                        bad = END_BEFORE_BEGIN
                    else:
                        _note_cpu(loc_cpu, loc, f[0])
                        s_loc[ns] = loc
                        s_begin[ns] = f[4] * tick_ns
                        s_end[ns] = end * tick_ns
                        s_state[ns] = f[6]
                        ns += 1
                        if end > t_end:
                            problems[AFTER_END] += 1
                            if first_line[AFTER_END] < 0:
                                first_line[AFTER_END] = line
            elif kind == 2:
                start = ne
                range_error = f[4] > max_tick
                wide_values = 0
                term = 1
                while term == 1:
                    t, i, term = _field(p, i, n)
                    if term != 1:
                        term = 0
                        break
                    v, i, term = _field(p, i, n)
                    if term == 0:
                        break
                    if t < 0 or t > INT32_MAX:
                        range_error = True
                    if term > OVERFLOW:       # a value beyond int64: this pair only is dropped
                        term -= OVERFLOW
                        wide_values += 1
                        continue
                    e_loc[ne] = loc
                    e_time[ne] = f[4] * tick_ns
                    e_type[ne] = t
                    e_value[ne] = v
                    ne += 1
                if term != 2 or (ne == start and wide_values == 0) or f[4] < 0:
                    ne = start
                    bad = MALFORMED
                elif loc < 0:
                    ne = start
                    bad = UNKNOWN_LOCATION
                elif range_error:
                    ne = start
                    bad = OUT_OF_RANGE
                else:
                    n_event_records += 1
                    _note_cpu(loc_cpu, loc, f[0])
                    if wide_values:
                        problems[WIDE_VALUE] += wide_values
                        if first_line[WIDE_VALUE] < 0:
                            first_line[WIDE_VALUE] = line
                if bad < 0 and f[4] > t_end:
                    problems[AFTER_END] += 1
                    if first_line[AFTER_END] < 0:
                        first_line[AFTER_END] = line
            elif kind == 3:
                # f[4] was the logical send time; 9 more fields follow
                term = 1
                for k in range(5, 13):
                    v, i, term = _field(p, i, n)
                    f[k] = v
                    if term != 1:
                        term = 0
                        break
                if term == 1:
                    v, i, term = _field(p, i, n)
                    f[13] = v
                if term != 2:
                    bad = MALFORMED
                else:
                    rloc = _location(f[7], f[8], f[9], appl_first_task, task_first_loc)
                    if loc < 0 or rloc < 0:
                        bad = UNKNOWN_LOCATION
                    elif f[4] < 0 or f[5] < 0 or f[10] < 0 or f[11] < 0:
                        bad = MALFORMED
                    elif f[4] > max_tick or f[5] > max_tick or f[10] > max_tick or f[11] > max_tick:
                        bad = OUT_OF_RANGE
                    else:
                        _note_cpu(loc_cpu, loc, f[0])
                        _note_cpu(loc_cpu, rloc, f[6])
                        c_cols[0, c_n] = loc
                        c_cols[1, c_n] = rloc
                        c_cols[2, c_n] = f[4] * tick_ns
                        c_cols[3, c_n] = f[5] * tick_ns
                        c_cols[4, c_n] = f[10] * tick_ns
                        c_cols[5, c_n] = f[11] * tick_ns
                        c_cols[6, c_n] = f[12]
                        c_cols[7, c_n] = f[13]
                        c_n += 1
            else:
                problems[GLOBAL_COMM] += 1
                if first_line[GLOBAL_COMM] < 0:
                    first_line[GLOBAL_COMM] = line
                i = _skip_line(p, i, n)
                line += 1
                continue
        else:
            bad = MALFORMED
        if bad >= 0:
            problems[bad] += 1
            if first_line[bad] < 0:
                first_line[bad] = line
            if i > 0 and i <= n and buf[i - 1] != NEWLINE:
                i = _skip_line(p, i, n)
        line += 1
    return (s_loc[:ns], s_begin[:ns], s_end[:ns], s_state[:ns],
            e_loc[:ne], e_time[:ne], e_type[:ne], e_value[:ne],
            c_cols[:, :c_n].copy(), problems, first_line, line, n_event_records, loc_cpu)


def distinct(values):
    """The distinct values of an int array, in no order: an open-addressing set,
    several times faster than np.unique for the few event types of a block."""
    found = _distinct_few(values)
    return np.unique(values) if found is None else found


@njit(cache=True, nogil=True)
def _distinct_few(values):
    """distinct(), or None when there are more distinct values than room (numpy then
    does it: np.unique compiled inside a kernel costs seconds at first use). The table
    starts small and doubles as it fills: a block has a few event types, and a table
    sized for its length (4 MB cleared a 16 MB block) was a twentieth of the 1 GB
    trace's page faults."""
    limit = 64
    while limit < 4 * min(len(values), 1 << 20):
        limit *= 2
    cap = 64
    table = np.empty(cap, values.dtype)
    used = np.zeros(cap, np.bool_)
    found = np.empty(cap // 2, values.dtype)
    n = 0
    for v in values:
        slot = (np.int64(v) * 0x9E3779B1) & (cap - 1)
        while used[slot] and table[slot] != v:
            slot = (slot + 1) & (cap - 1)
        if used[slot]:
            continue
        if n == cap // 2:                 # half full: twice the room, or numpy's turn
            if cap == limit:
                return None
            cap *= 2
            table = np.empty(cap, values.dtype)
            used = np.zeros(cap, np.bool_)
            grown = np.empty(cap // 2, values.dtype)
            grown[:n] = found[:n]
            found = grown
            for k in range(n):
                s = (np.int64(found[k]) * 0x9E3779B1) & (cap - 1)
                while used[s]:
                    s = (s + 1) & (cap - 1)
                used[s] = True
                table[s] = found[k]
            slot = (np.int64(v) * 0x9E3779B1) & (cap - 1)
            while used[slot]:
                slot = (slot + 1) & (cap - 1)
        used[slot] = True
        table[slot] = v
        found[n] = v
        n += 1
    return found[:n]
