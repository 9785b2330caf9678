"""What a cfg window's communication filter lets through, and the thread functions that read
communication records (Event Bytes, Number Of Sends ... Receive Bytes, Comm Partner, Comm
Recv. Partner, Last Tag, Comm Size), vectorised over the trace's message columns as the
Paraver kernel computes them record by record (kfilter.cpp, semanticthreadfunctions.cpp).

Paraver gives every message four records: on the sender its logical and physical send, on
the receiver its logical and physical receive (plus "remote" records the functions here do
not read). A window's filter passes a logical record when the window is logically filtered,
a physical one when it is physically filtered, and, logically filtered only, a physical
receive that is not before the logical one; then the message filters (from, to, tag, size,
bandwidth), whose functions (`All`, `None`, `=`, `!=`, `<`, `>`, `[x,y]`) are those of
the event filters, and which are false by default for any function but `All`.
No Qt.
"""
from __future__ import annotations

import numpy as np

# record kinds, as (row column, time column)
LOG_SEND, PHY_SEND, LOG_RECV, PHY_RECV = "log_send", "phy_send", "log_recv", "phy_recv"
RECORD_AT = {LOG_SEND: ("send_loc", "send_time"), PHY_SEND: ("send_loc", "send_phys"),
             LOG_RECV: ("recv_loc", "recv_time"), PHY_RECV: ("recv_loc", "recv_phys")}


class FilterError(ValueError):
    """A filter popview cannot apply (named in the message)."""


def _criterion_passes(criterion, data: np.ndarray) -> np.ndarray:
    """KFilter's loop over the filter's values (FilterAll ... FilterRange::execute): the
    default value (true for All only) when it has none."""
    function = criterion.function if criterion is not None else "All"
    if function == "All":
        return np.ones(len(data), bool)
    values = np.asarray(criterion.values, np.float64)
    if function == "None" or len(values) == 0:
        return np.zeros(len(data), bool)
    if function == "=":
        return np.isin(data, values)
    if function == "!=":
        return ~np.isin(data, values)
    if function == ">":
        return (data[:, None] > values[None, :]).all(axis=1)
    if function == "<":
        return (data[:, None] < values[None, :]).all(axis=1)
    if function == "[x,y]":
        inside = data >= values[0]
        return inside & (data <= values[1]) if len(values) > 1 else inside
    raise FilterError(f"filter function {function!r}")


def message_mask(window, trace, row_of_thread: np.ndarray | None = None) -> np.ndarray:
    """Per message: whether it passes the window's from / to, tag / size and bandwidth filters
    (KFilter::filterComms without its logical / physical part), with the window's `and` / `or`
    between from and to, and between tag and size. `row_of_thread` maps a thread to the
    window's object (its task for task rows); from / to values are 1-based objects."""
    m = trace.messages
    n = len(m["size"])
    criteria = window.filters.criteria
    filters = window.filters
    logical, physical = filters.logical is not False, filters.physical is True

    def objects(column):
        threads = m[column].astype(np.int64)
        rows = threads if row_of_thread is None else row_of_thread[np.clip(threads, 0, len(row_of_thread) - 1)]
        return rows.astype(np.float64) + 1.0

    def passes(key, data_of):
        criterion = criteria.get(key)
        if criterion is None or criterion.function == "All":
            return np.ones(n, bool)
        if criterion.function != "None" and criterion.values:
            return _criterion_passes(criterion, data_of())
        return np.zeros(n, bool)

    from_ok = passes("from_obj", lambda: objects("send_loc"))
    to_ok = passes("to_obj", lambda: objects("recv_loc"))

    def tags():
        if "tag" not in m:
            raise FilterError("message tags are not in the trace's columns")
        return m["tag"].astype(np.float64)

    tag_ok = passes("tag_msg", tags)
    size_ok = passes("size_msg", lambda: m["size"].astype(np.float64))
    bw_ok = passes("bw_msg", lambda: _bandwidth(m, logical, physical, window))
    # KFilter: from AND to must both hold; with "or" a message from a selected object passes at
    # once (to, tag, size and bandwidth not looked at), else its receiver must be; likewise tag
    # OR size: a selected tag passes, else size and bandwidth must
    if filters.fromto_and is False:
        early, rest = from_ok, to_ok
    else:
        early, rest = np.zeros(n, bool), from_ok & to_ok
    tail = (tag_ok | (size_ok & bw_ok)) if filters.tagsize_and is False else (tag_ok & size_ok & bw_ok)
    return early | (rest & tail)


def _bandwidth(m, logical: bool, physical: bool, window) -> np.ndarray:
    """KFilter's bandwidth of a message: size / transfer time in the window's units (the
    logical times when the logical receive is the later one and the window is logically
    filtered; else from the physical, or logical, send to the physical receive)."""
    from .evaluate import window_unit_ns
    log_send, phy_send = m["send_time"].astype(np.float64), m["send_phys"].astype(np.float64)
    log_recv, phy_recv = m["recv_time"].astype(np.float64), m["recv_phys"].astype(np.float64)
    if logical:
        time = np.where(log_recv > phy_recv, log_recv - log_send, phy_recv - (phy_send if physical else log_send))
    else:
        time = phy_recv - (phy_send if physical else log_send)
    with np.errstate(divide="ignore", invalid="ignore"):
        return m["size"].astype(np.float64) / (time / window_unit_ns(window))


def record_passes(window, trace, kind: str) -> np.ndarray:
    """The logical / physical part of KFilter::filterComms for one kind of record, per message."""
    filters = window.filters
    logical, physical = filters.logical is not False, filters.physical is True
    m = trace.messages
    n = len(m["size"])
    if kind in (LOG_SEND, LOG_RECV):
        return np.full(n, logical)
    if physical:
        return np.ones(n, bool)
    if kind == PHY_RECV and logical:
        return m["recv_time"] <= m["recv_phys"]
    return np.zeros(n, bool)


def records(window, trace, kind: str, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(message index, row, time) of the records of one kind that pass the window's filter."""
    m = trace.messages
    keep = mask & record_passes(window, trace, kind)
    row_column, time_column = RECORD_AT[kind]
    row = m[row_column].astype(np.int64)
    keep &= (row >= 0) & (row < trace.n_rows)
    index = np.flatnonzero(keep)
    return index, row[index], m[time_column][index].astype(np.int64)


def event_bytes(window, trace, loc: np.ndarray, time: np.ndarray, sent_only: bool = False) -> np.ndarray:
    """Event Bytes (Event Sent Bytes with `sent_only`) of the interval that starts at each of
    the row's selected events (loc, time sorted by row and time): the sizes of the row's
    communication records the kernel's getTotalCommSize (getTotalSentCommSize) adds from that
    event to the row's next selected event, as it walks them record by record.

    From an event at t to the next at t' > t: every send at t that the filter passes
    (logically filtered: logical sends; else physical ones); the records strictly between
    (logically filtered: logical sends and receives and the physical receives the filter
    passes, without a logical receive that is not later than its physical one when both
    filters are on; physically only: physical sends and receives); at t' the receive record
    that is the later of the message's logical and physical receive (physically only: the
    physical receive). Event Sent Bytes: the sends at t and strictly before t'. Events at
    one instant: the interval of no duration from one to the next holds the sends at t.
    The row's last event holds 0."""
    m = trace.messages
    filters = window.filters
    logical, physical = filters.logical is not False, filters.physical is True
    mask = message_mask(window, trace)
    size = m["size"].astype(np.float64)
    log_recv, phy_recv = m["recv_time"].astype(np.int64), m["recv_phys"].astype(np.int64)
    parts_row, parts_time, w_begin, w_inside, w_end = [], [], [], [], []
    for kind in (LOG_SEND, PHY_SEND, LOG_RECV, PHY_RECV):
        index, row, at = records(window, trace, kind, mask)
        if len(index) == 0:
            continue
        s = size[index]
        zero = np.zeros(len(index))
        sends = kind in (LOG_SEND, PHY_SEND)
        if sent_only:
            begin = s if sends and (kind == LOG_SEND) == logical else zero
            inside = s if sends else zero
            end = zero
        elif kind == LOG_SEND:
            begin, inside, end = s, s, zero                      # passes only when logically filtered
        elif kind == PHY_SEND:
            only_physical = physical and not logical
            begin = s if only_physical else zero
            inside, end = (s if only_physical else zero), zero
        elif kind == LOG_RECV:
            counted = ~(physical & (phy_recv[index] >= log_recv[index])) if logical else np.ones(len(index), bool)
            inside = np.where(counted, s, 0.0)
            end = np.where(counted & (log_recv[index] > phy_recv[index]), s, 0.0)
            begin = zero
        else:                                                     # physical receive
            begin, inside = zero, s
            end = s if not logical else np.where(phy_recv[index] >= log_recv[index], s, 0.0)
        parts_row.append(row)
        parts_time.append(at)
        w_begin.append(begin)
        w_inside.append(inside)
        w_end.append(end)
    n = len(loc)
    if n == 0:
        return np.zeros(0)
    if not parts_row:
        return np.zeros(n)
    row = np.concatenate(parts_row)
    at = np.concatenate(parts_time)
    span = np.int64(max(int(at.max(initial=0)), int(time.max(initial=0))) + 2)
    key = row * span + at
    order = np.argsort(key, kind="stable")
    key = key[order]
    cum = {name: np.r_[0.0, np.cumsum(np.concatenate(w)[order])]
           for name, w in (("begin", w_begin), ("inside", w_inside), ("end", w_end))}

    def total(name, low_key, high_key):          # sum of weights with low_key <= key < high_key
        return cum[name][np.searchsorted(key, high_key, "left")] - cum[name][np.searchsorted(key, low_key, "left")]

    here = loc.astype(np.int64) * span + time.astype(np.int64)
    has_next = np.r_[loc[1:] == loc[:-1], False]
    following = np.r_[here[1:], 0]
    value = total("begin", here, here + 1)
    later = has_next & (following > here)
    value = value + np.where(later, total("inside", here + 1, following) + total("end", following, following + 1), 0.0)
    return np.where(has_next, value, 0.0)


# The order of a thread's records at one instant (plaintypes.h getTypeOrdered): physical
# receive 1, logical send 4, physical send 5, logical receive 6.
RANK = {PHY_RECV: 1, LOG_SEND: 4, PHY_SEND: 5, LOG_RECV: 6}

# Thread functions reading communication records, as semanticthreadfunctions.cpp computes them:
# the records that start an interval (validateMask), and whether the value adds up from the
# trace's start (initFromBegin).
RECORD_FUNCTIONS = {
    "Number Of Sends": ((LOG_SEND, PHY_SEND), True), "Number Of Send Bytes": ((LOG_SEND, PHY_SEND), True),
    "Number Of Receives": ((LOG_RECV, PHY_RECV), True), "Number Of Receive Bytes": ((LOG_RECV, PHY_RECV), True),
    "Comm Partner": ((LOG_SEND, PHY_SEND), False), "Comm Recv. Partner": ((LOG_RECV, PHY_RECV), False),
    "Last Tag": ((PHY_RECV,), False), "Comm Size": ((LOG_SEND, PHY_SEND, LOG_RECV, PHY_RECV), False),
    "Last Send Dur.": ((LOG_SEND,), False), "Next Recv Dur.": ((LOG_RECV,), False),
    "Last Send Size": ((LOG_SEND,), False),
}


def _stream(trace, kinds) -> dict[str, np.ndarray]:
    """Every record of the given kinds of every message on its thread, in the kernel's order of a
    thread's records: by time, then kind (RANK), then the message's place in the trace (its send
    time, then its place in the columns)."""
    m = trace.messages
    parts = []
    for kind in kinds:
        row_column, time_column = RECORD_AT[kind]
        n = len(m["size"])
        parts.append((m[row_column].astype(np.int64), m[time_column].astype(np.int64), np.full(n, RANK[kind]),
                      np.arange(n), np.full(n, list(RECORD_AT).index(kind))))
    row, time, rank, message, kind = (np.concatenate(p) for p in zip(*parts))
    inside = (row >= 0) & (row < trace.n_rows)
    row, time, rank, message, kind = row[inside], time[inside], rank[inside], message[inside], kind[inside]
    order = np.lexsort((message, m["send_time"][message], rank, time, row))
    return {"row": row[order], "time": time[order], "message": message[order], "kind": kind[order]}


def record_function(window, trace, name: str, unit_ns: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The points (row, time, value) at which a communication-record function's intervals start:
    each record of its kinds the window's filter passes, in the kernel's order (the first interval,
    from the trace's start, holds 0)."""
    kinds, from_begin = RECORD_FUNCTIONS[name]
    m = trace.messages
    filters = window.filters
    physical = filters.physical is True
    mask = message_mask(window, trace)
    every = list(RECORD_AT)
    s = _stream(trace, every)
    kind_name = np.asarray(every)[s["kind"]]
    message = s["message"]
    passes = np.zeros(len(message), bool)
    for kind in kinds:
        here = kind_name == kind
        passes[here] = (mask & record_passes(window, trace, kind))[message[here]]
    size = m["size"].astype(np.float64)[message]
    log_recv, phy_recv = m["recv_time"].astype(np.int64)[message], m["recv_phys"].astype(np.int64)[message]
    if from_begin:                      # added up record after record from the trace's start
        if name.startswith("Number Of Send"):
            counted = passes
        else:
            counted = passes & (((kind_name == PHY_RECV) & (physical | (phy_recv >= log_recv)))
                                | ((kind_name == LOG_RECV) & (log_recv > phy_recv)))
        weight = np.where(counted, size if name.endswith("Bytes") else 1.0, 0.0)
        starts = np.r_[True, s["row"][1:] != s["row"][:-1]] if len(message) else np.zeros(0, bool)
        total = np.cumsum(weight)
        total -= (np.r_[0.0, total[:-1]][starts])[np.cumsum(starts) - 1] if len(message) else 0.0
        value = total
    elif name == "Comm Partner":
        value = m["recv_loc"].astype(np.float64)[message] + 1.0
    elif name in ("Comm Recv. Partner", "Next Recv Dur."):
        if name == "Comm Recv. Partner":      # the next receive record that is the message's later one
            target = (((kind_name == LOG_RECV) & (log_recv >= phy_recv))
                      | ((kind_name == PHY_RECV) & (phy_recv > log_recv)))
        else:                                 # the next receive record
            target = np.isin(kind_name, (LOG_RECV, PHY_RECV))
        n = len(message)
        after = np.r_[np.where(target, np.arange(n), n)[1:], n][:n]      # a target strictly after
        nxt = np.minimum.accumulate(after[::-1])[::-1] if n else after    # the first one after
        ok = nxt < n
        ok[ok] &= s["row"][nxt[ok]] == s["row"][ok]                      # on the same row
        j = np.where(ok, nxt, 0)
        if name == "Comm Recv. Partner":
            value = np.where(ok, m["send_loc"].astype(np.float64)[message[j]] + 1.0, 0.0)
        else:
            value = np.where(ok, (m["send_time"].astype(np.float64)[message[j]] - s["time"]) / unit_ns, 0.0)
    elif name == "Last Tag":
        if "tag" not in m:
            raise FilterError("message tags are not in the trace's columns")
        value = m["tag"].astype(np.float64)[message]
    elif name == "Last Send Dur.":
        value = (np.maximum(log_recv, phy_recv) - s["time"]) / unit_ns
    else:                                     # Comm Size, Last Send Size
        value = size
    return s["row"][passes], s["time"][passes], value[passes]



# Thread functions of what is in transit (semanticthreadfunctions.cpp): (the row is the sender,
# weight: "bw" bandwidth, "size" bytes, "one" messages, negative messages only)
IN_TRANSIT = {
    "Send BandWidth": (True, "bw", False), "Recv BandWidth": (False, "bw", False),
    "Send Bytes in Transit": (True, "size", False), "Recv Bytes in Transit": (False, "size", False),
    "Send Messages in Transit": (True, "one", False), "Recv Messages in Transit": (False, "one", False),
    "Recv Negative Messages": (False, "one", True), "Recv Negative Bytes": (False, "size", True),
}
# the "remote" records: on the receiver at the send times, on the sender at the receive times
RSEND_LOG, RSEND_PHY, RRECV_LOG, RRECV_PHY = "rsend_log", "rsend_phy", "rrecv_log", "rrecv_phy"
REMOTE_AT = {RSEND_LOG: ("recv_loc", "send_time", 3), RSEND_PHY: ("recv_loc", "send_phys", 3),
             RRECV_LOG: ("send_loc", "recv_time", 2), RRECV_PHY: ("send_loc", "recv_phys", 2)}


def in_transit_points(window, trace, name: str, unit_ns: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What is in transit, record by record as the kernel adds it up (SendBandWidth ...
    RecvNegativeBytes): every record the function reads that the window's filter passes starts
    an interval (row, time, value), in the kernel's order of a thread's records. A message
    counts from its send record (logical with the logical filter, else physical) to its receive
    record (the later of logical and physical with the logical filter, else the physical one);
    its weight is 1, its size, or size / factor per window time unit of transfer (the bandwidth,
    in the kernel's whole 1e-12 steps). Messages received no later than sent count only in
    Recv Negative *, with the opposite sign."""
    sender, weight, negatives = IN_TRANSIT[name]
    filters = window.filters
    logical, physical = filters.logical is not False, filters.physical is True
    m = trace.messages
    mask = message_mask(window, trace)
    log_send, phy_send = m["send_time"].astype(np.int64), m["send_phys"].astype(np.int64)
    log_recv, phy_recv = m["recv_time"].astype(np.int64), m["recv_phys"].astype(np.int64)
    if logical:
        negative = np.maximum(log_recv, phy_recv) <= log_send
        duration = np.where(log_recv > phy_recv, log_recv - log_send, phy_recv - (phy_send if physical else log_send))
    else:
        negative = phy_recv <= phy_send
        duration = phy_recv - (phy_send if physical else log_send)
    counted = negative if negatives else ~negative
    if weight == "bw":
        counted &= duration != 0
        factor = float(np.asarray(window.functions["thread"].params[0] if window.functions["thread"].params
                                  and window.functions["thread"].params[0] else (1.0,), np.float64)[0])
        length = np.abs(duration) / unit_ns
        step = (m["size"].astype(np.float64) / factor / np.where(length > 0, length, 1.0) * 1e12).astype(np.int64)
    else:
        step = m["size"].astype(np.int64) if weight == "size" else np.ones(len(duration), np.int64)
    if negatives:
        step = -step
    later_logical = log_recv > phy_recv
    # the records the function reads (validateMask), what each one adds (+ at the send, - at the receive)
    if sender:
        kinds = ((LOG_SEND, logical, logical), (PHY_SEND, physical, not logical),
                 (RRECV_LOG, logical, None), (RRECV_PHY, physical or logical, None))
    else:
        kinds = ((RSEND_LOG, logical, logical), (RSEND_PHY, physical, not logical),
                 (LOG_RECV, logical, None), (PHY_RECV, physical or logical, None))
    parts = []
    for kind, kind_passes, starts in kinds:
        if not kind_passes:
            continue
        if kind in RECORD_AT:
            row_column, time_column = RECORD_AT[kind]
            rank = RANK[kind]
            passes = mask & record_passes(window, trace, kind)
        else:
            row_column, time_column, rank = REMOTE_AT[kind]
            passes = mask.copy()
            if kind in (RSEND_PHY, RRECV_PHY) and not physical:       # KFilter: the physical record of
                passes &= log_recv <= phy_recv                        # a receive not before the logical one
        if starts is True:
            delta = np.where(counted, step, 0)
        elif starts is None:                  # a receive record: the message's ends here if it is the one
            if logical:
                ends = later_logical if kind in (LOG_RECV, RRECV_LOG) else ~later_logical
            else:
                ends = np.full(len(step), kind in (PHY_RECV, RRECV_PHY))
            delta = np.where(counted & ends, -step, 0)
        else:
            delta = np.zeros(len(step), np.int64)
        row = m[row_column].astype(np.int64)
        keep = passes & (row >= 0) & (row < trace.n_rows)
        index = np.flatnonzero(keep)
        parts.append((row[index], m[time_column][index].astype(np.int64), np.full(len(index), rank), index,
                      delta[index]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    row, time, rank, message, delta = (np.concatenate(p) for p in zip(*parts))
    order = np.lexsort((message, log_send[message], rank, time, row))
    row, time, delta = row[order], time[order], delta[order]
    total = np.cumsum(delta)
    starts = np.r_[True, row[1:] != row[:-1]] if len(row) else np.zeros(0, bool)
    if len(row):
        total = total - np.r_[0, total[:-1]][starts][np.cumsum(starts) - 1]
    value = total * 1e-12 if weight == "bw" else total.astype(np.float64)
    return row, time, value
