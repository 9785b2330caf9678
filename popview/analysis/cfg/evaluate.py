"""Evaluate a cfg's timelines and histograms on a trace's cache, vectorised per window.

A first, deliberately small engine: thread-level rows; thread functions Useful, State As Is,
State Sign, Given State, State Record Dur., Int. Between Evt, Avg Next / Last Evt Val,
Last / Next Evt Val (with the event-type filter; Last composed by Stacked Val); the `As Is`
compose, `Sign` as topcompose; derived add, product,
substract, divide, maximum, minimum; histogram statistics Time, % Time, Sum bursts, # Bursts, Integral and Average value over
binned columns. Anything else raises NotEvaluated naming what popview cannot evaluate yet.
Times are in the trace's nanoseconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import CfgView, Criterion, Histogram, Window

RUNNING = 1      # Paraver state 1: running, the "useful" state


class NotEvaluated(ValueError):
    """The window or histogram uses something this engine does not evaluate (named in the message)."""


@dataclass
class Timeline:
    """Piecewise-constant values per row: intervals [begin, end) sorted by row, then time."""
    row: np.ndarray      # int32
    begin: np.ndarray    # int64 ns
    end: np.ndarray      # int64 ns
    value: np.ndarray    # float64
    n_rows: int


@dataclass
class TraceColumns:
    """What the engine reads of a trace: state and event columns of its thread locations."""
    t_end: int
    n_rows: int
    states: dict[str, np.ndarray]     # loc, begin, end, state
    events: dict[str, np.ndarray]     # loc, time, type, value

    @classmethod
    def from_cache(cls, reader, definitions) -> "TraceColumns":
        threads = [i for i, loc in enumerate(definitions.locations) if loc.kind == "thread"]
        if threads != list(range(len(threads))):
            raise NotEvaluated("thread locations are not the first locations of the trace")
        every = None if len(threads) == len(definitions.locations) else threads   # None: whole columns at once
        return cls(int(definitions.t_end), len(threads), reader.read("states", locations=every),
                   reader.read("events", locations=every))


# -- windows ---------------------------------------------------------------------------------

def evaluate_window(view: CfgView, position: int, trace: TraceColumns) -> Timeline:
    window = view.window(position)
    if window.level != "thread" and not (window.level == "task" and _one_thread_per_task(window)):
        raise NotEvaluated(f"window {position} {window.name!r}: rows at {window.level} level")
    for slot, function in window.compose.items():
        if function.name == "As Is" or (slot in TOP_COMPOSE and function.name in TOP_COMPOSE_FUNCTIONS) \
                or (slot == "compose_thread" and function.name == "Stacked Val" and not window.derived):
            continue
        raise NotEvaluated(f"window {position} {window.name!r}: compose {function.name!r} ({slot})")
    if window.derived:
        d = window.derivation
        if any(d.shifts):
            raise NotEvaluated(f"window {position} {window.name!r}: interval shifts")
        left, right = (evaluate_window(view, parent, trace) for parent in d.parents)
        timeline = _combine(d.operation, left, right, d.factors, f"window {position} {window.name!r}")
    else:
        timeline = _single(window, trace)
    for slot in TOP_COMPOSE:                  # the window's value composed, topcompose1 then 2
        function = window.compose.get(slot)
        if function is not None and function.name != "As Is":
            timeline.value = TOP_COMPOSE_FUNCTIONS[function.name](timeline.value)
    return timeline


UNIT_NS = {"Nanoseconds": 1.0, "Microseconds": 1e3, "Milliseconds": 1e6, "Seconds": 1e9,
           "Hours": 3600e9, "Days": 86400e9}


def window_unit_ns(window: Window) -> float:
    """Nanoseconds per unit of the window's time unit (window_units; ns when not given)."""
    if window.units is not None and window.units not in UNIT_NS:
        raise NotEvaluated(f"window {window.position} {window.name!r}: time unit {window.units!r}")
    return UNIT_NS.get(window.units or "Nanoseconds")


TOP_COMPOSE = ("topcompose1", "topcompose2")
TOP_COMPOSE_FUNCTIONS = {"Sign": np.sign}


def _one_thread_per_task(window: Window) -> bool:
    """Not known from the cfg alone: task rows are evaluated only when declared thread-equivalent."""
    return False


def _single(window: Window, trace: TraceColumns) -> Timeline:
    function = window.functions.get("thread")
    name = function.name if function else None
    if name in ("Useful", "State As Is", "State Sign", "Given State", "State Record Dur."):
        s = trace.states
        value = s["state"].astype(np.float64)
        if name == "State Record Dur.":      # the state's duration in the window's units when it is a given one
            given = np.asarray(function.params[0] if function.params else (RUNNING,), np.float64)
            duration = (s["end"] - s["begin"]) / window_unit_ns(window)
            return Timeline(s["loc"].astype(np.int32), s["begin"], s["end"],
                            np.where(np.isin(value, given), duration, 0.0), trace.n_rows)
        if name == "Useful":
            value = (s["state"] == RUNNING).astype(np.float64)
        elif name == "State Sign":
            value = (s["state"] != 0).astype(np.float64)
        elif name == "Given State":          # the state when it is one of the given ones, else 0
            given = np.asarray(function.params[0] if function.params else (), np.float64)
            value = np.where(np.isin(value, given), value, 0.0)
        return Timeline(s["loc"].astype(np.int32), s["begin"], s["end"], value, trace.n_rows)
    if name in ("Next Evt Val", "Last Evt Val"):
        stacked = window.compose.get("compose_thread")
        stacked = stacked is not None and stacked.name == "Stacked Val"
        if stacked and name != "Last Evt Val":
            raise NotEvaluated(f"window {window.position} {window.name!r}: compose 'Stacked Val' over {name!r}")
        return _event_values(window, trace, following=name == "Next Evt Val", stacked=stacked)
    if name == "Int. Between Evt":
        return _event_values(window, trace, following=False, between=True)
    if name in ("Avg Next Evt Val", "Avg Last Evt Val"):     # the value x factor per window time unit
        factor = float(function.params[0][0]) if function.params and function.params[0] else 1.0
        return _event_values(window, trace, following=name == "Avg Next Evt Val", per_time=factor)
    raise NotEvaluated(f"window {window.position} {window.name!r}: thread function {name!r}")


def _selected_types(criterion: Criterion | None, types: np.ndarray, name: str) -> np.ndarray:
    if criterion is None or criterion.function == "All":
        return np.ones(len(types), bool)
    if criterion.function == "None":
        return np.zeros(len(types), bool)
    wanted = np.asarray(criterion.values, np.int64)
    if criterion.function == "=":
        return np.isin(types, wanted)
    if criterion.function == "!=":
        return ~np.isin(types, wanted)
    if criterion.function == "[x,y]" and len(wanted) == 2:
        return (types >= wanted[0]) & (types <= wanted[1])
    raise NotEvaluated(f"{name}: event type filter {criterion.function!r} with {len(wanted)} values")


def _stacked(loc: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Paraver's Stacked Val compose over each row's events in order: a non-zero value is
    pushed, a zero pops (nothing when the stack is empty); the result after each event is the
    top of the stack, 0 when empty. Vectorised: the depth is the walk of +1 / -1 steps
    reflected at 0 (depth = S - min(0, running min of S) per row), and the top is the value of
    the row's last push to that depth."""
    n = len(loc)
    push = value != 0
    if not push.any():
        return np.zeros(n, np.float64)
    step = np.where(push, 1, -1).astype(np.int64)
    total = np.cumsum(step)
    starts = np.r_[True, loc[1:] != loc[:-1]]
    row_index = np.cumsum(starts) - 1
    before = np.r_[0, total[:-1]][starts][row_index]          # the walk before each row
    walk = total - before
    big = 4 * n + 4                                              # rows kept apart in one running minimum
    lowest = np.minimum.accumulate(walk - row_index * big) + row_index * big
    depth = walk - np.minimum(lowest, 0)
    # the top: the last push j <= i of the row with depth[j] == depth[i]
    span = int(depth.max()) + 1
    group = row_index * span + depth
    pushes = np.flatnonzero(push)
    order = np.lexsort((pushes, group[pushes]))
    keys = group[pushes][order] * (n + 1) + pushes[order]
    at = np.searchsorted(keys, group * (n + 1) + np.arange(n), side="right") - 1
    found = (at >= 0) & (keys[np.clip(at, 0, None)] // (n + 1) == group) & (depth > 0)
    return np.where(found, value[pushes[order][np.clip(at, 0, None)]], 0.0)


def _event_values(window: Window, trace: TraceColumns, following: bool, stacked: bool = False,
                  between: bool = False, per_time: float | None = None) -> Timeline:
    """Intervals between consecutive selected events of each row; the value of the event that
    ends (Next) or starts (Last) each interval, 0 where there is none. With `stacked`, each
    event's value is first composed by Stacked Val over all the row's events (several at one
    instant included)."""
    name = f"window {window.position} {window.name!r}"
    criteria = window.filters.criteria
    if criteria.get("evt_value", Criterion()).function != "All":
        raise NotEvaluated(f"{name}: event value filter")
    e = trace.events
    keep = _selected_types(criteria.get("evt_type"), e["type"].astype(np.int64), name)
    loc, time, value = e["loc"][keep].astype(np.int64), e["time"][keep], e["value"][keep].astype(np.float64)
    order = np.lexsort((time, loc))          # stable: events at one instant keep the trace's order
    loc, time, value = loc[order], time[order], value[order]
    if stacked:
        value = _stacked(loc, value)
    # several events at one instant: the first ends the interval before it (Next), the last
    # starts the one after it (Last); the zero-length intervals between them hold no time
    change = (loc[1:] != loc[:-1]) | (time[1:] != time[:-1])
    one_per_instant = (np.r_[True, change] if following else np.r_[change, True]) if len(loc) else np.zeros(0, bool)
    loc, time, value = loc[one_per_instant], time[one_per_instant], value[one_per_instant]
    # per row: boundaries 0, t1..tk, t_end -> k+1 intervals
    rows = np.arange(trace.n_rows)
    per_row = np.bincount(loc, minlength=trace.n_rows)
    starts = np.r_[0, np.cumsum(per_row + 1)][:-1]
    total = int((per_row + 1).sum())
    row = np.repeat(rows, per_row + 1).astype(np.int32)
    begin = np.zeros(total, np.int64)
    end = np.full(total, trace.t_end, np.int64)
    vals = np.zeros(total, np.float64)
    index = np.arange(len(loc)) - np.r_[0, np.cumsum(per_row)][loc] + starts[loc]
    end[index], begin[index + 1] = time, time
    if per_time is not None:          # Avg Next / Last Evt Val: value x factor / interval length in window units
        at = index if following else index + 1
        last = (index + 1) == starts[loc] + per_row[loc]
        length = (end[at] - begin[at]) / window_unit_ns(window)
        ok = (length > 0) & (following | ~last)       # Last: nothing after the row's last event
        vals[at] = np.where(ok, value * per_time / np.where(length > 0, length, 1.0), 0.0)
    elif following:
        vals[index] = value
    elif between:       # Int. Between Evt: from each event to the next one, in the window's units; 0 after the last
        last = (index + 1) == starts[loc] + per_row[loc]
        vals[index + 1] = np.where(last, 0.0, (end[index + 1] - begin[index + 1]) / window_unit_ns(window))
    else:
        vals[index + 1] = value
    nonempty = end > begin
    return Timeline(row[nonempty], begin[nonempty], end[nonempty], vals[nonempty], trace.n_rows)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy's hash-based unique took 18 s on 10^7 int64 keys here)."""
    values = np.sort(values, kind="stable")      # merges the sorted runs it is made of
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


_OPERATIONS = {
    "add": np.add, "product": np.multiply, "substract": np.subtract, "maximum": np.maximum,
    "minimum": np.minimum,
    "divide": lambda a, b: np.divide(a, b, out=np.zeros_like(a), where=b != 0),
}


def _combine(operation: str, left: Timeline, right: Timeline, factors, name: str) -> Timeline:
    """Pointwise op(f0 * left, f1 * right) on the union of both windows' boundaries."""
    if operation not in _OPERATIONS:
        raise NotEvaluated(f"{name}: derived operation {operation!r}")
    span = np.int64(max(int(left.end.max(initial=0)), int(right.end.max(initial=0))) + 1)
    keys = [t.row.astype(np.int64) * span + t.begin for t in (left, right)]
    ends = [t.row.astype(np.int64) * span + t.end for t in (left, right)]
    cuts = _sorted_unique(np.concatenate(keys + ends))
    begin_key, end_key = cuts[:-1], cuts[1:]
    same_row = (begin_key // span == (end_key - 1) // span) & (end_key - begin_key // span * span < span)
    begin_key, end_key = begin_key[same_row], end_key[same_row]       # no segment across two rows
    values = []
    for timeline, key, stop, factor in zip((left, right), keys, ends, factors):
        at = np.searchsorted(key, begin_key, side="right") - 1
        inside = (at >= 0) & (stop[np.clip(at, 0, None)] > begin_key)
        values.append(np.where(inside, timeline.value[np.clip(at, 0, None)], 0.0) * factor)
    row = begin_key // span
    return Timeline(row.astype(np.int32), begin_key - row * span, end_key - row * span,
                    _OPERATIONS[operation](values[0], values[1]), left.n_rows)


# -- histograms ------------------------------------------------------------------------------

@dataclass
class HistogramTable:
    """Per row and column: the statistic; `columns` gives each column's lower bound."""
    columns: np.ndarray
    table: np.ndarray        # (rows, columns)
    statistic: str


def evaluate_histogram(view: CfgView, histogram: Histogram, trace: TraceColumns) -> HistogramTable:
    """A 2D histogram: control-window values binned into columns, the statistic of the data window."""
    if histogram.is_3d:
        raise NotEvaluated(f"histogram {histogram.name!r}: 3D planes")
    if histogram.statistic not in STATISTICS:
        raise NotEvaluated(f"histogram {histogram.name!r}: statistic {histogram.statistic!r}")
    if histogram.limits not in (None, "Alltrace"):
        raise NotEvaluated(f"histogram {histogram.name!r}: analysis limits {histogram.limits!r}")
    control = evaluate_window(view, histogram.columns.window, trace)
    data = control
    if histogram.data_window != histogram.columns.window:      # both on the union of their boundaries
        other = evaluate_window(view, histogram.data_window, trace)
        control, data = (_combine("add", control, other, factors, histogram.name) for factors in ((1, 0), (0, 1)))
    lower, column = _bins(histogram, control.value)
    keep = column >= 0
    keep &= _within(histogram, data.value, data.end - data.begin)
    duration = (data.end - data.begin).astype(np.float64)
    flat = control.row[keep].astype(np.int64) * len(lower) + column[keep]
    shape = (control.n_rows, len(lower))

    def cells(weight):
        return np.bincount(flat, weights=weight[keep], minlength=shape[0] * shape[1]).reshape(shape)

    statistic = histogram.statistic
    if statistic == "Time":
        table = cells(duration)
    elif statistic == "Sum bursts":
        table = cells(data.value)
    elif statistic == "# Bursts":
        table = cells(np.ones(len(data.value)))
    elif statistic == "Integral":                       # duration x |value| (StatIntegral), ns here
        table = cells(duration * np.abs(data.value))
    elif statistic == "Average value":                  # time-weighted mean of the data values
        time = cells(duration)
        table = np.divide(cells(duration * data.value), time, out=np.zeros(shape), where=time > 0)
    else:                                               # % Time: of the row's counted time
        time = cells(duration)
        total = time.sum(axis=1, keepdims=True)
        table = np.divide(time * 100.0, total, out=np.zeros(shape), where=total > 0)
    return HistogramTable(lower, table, statistic)


# The statistics evaluated, as Paraver's histogramstatistic.cpp computes them; Time and
# Integral are in ns (trace units) here, in the window's units in paramedir's table.
STATISTICS = ("Time", "Sum bursts", "# Bursts", "Integral", "Average value", "% Time")


def _bins(histogram: Histogram, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns as Paraver's ColumnTranslator makes them: ceil((max-min)/delta) columns (one more
    when delta is 1 and max is a column's start, at least one); a value in [min, max] falls in
    column floor((value-min)/delta), the last one at most; -1 outside."""
    b = histogram.columns
    if b.compute:
        return _code_columns(histogram, values)
    if b.minimum is None or b.maximum is None or not b.delta:
        raise NotEvaluated(f"histogram {histogram.name!r}: columns without minimum, maximum and delta")
    count = int(np.ceil((b.maximum - b.minimum) / b.delta))
    if b.delta == 1 and count * b.delta + b.minimum <= b.maximum:
        count += 1
    count = max(count, 1)
    if count > 100_000:
        raise NotEvaluated(f"histogram {histogram.name!r}: {count} columns")
    lower = b.minimum + b.delta * np.arange(count)
    column = np.minimum(np.floor((values - b.minimum) / b.delta), count - 1).astype(np.int64)
    column[(values < b.minimum) | (values > b.maximum)] = -1
    return lower, column


def _code_columns(histogram: Histogram, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ComputeYScale on a window of whole values: one column per value present (code columns).

    Paraver's computed scale starts at the window's smallest non-zero value (TimelineProxy::
    computeYScale skips zeros): the zero intervals of a Useful window are no column, which is
    why PyPOP reads a single column from its useful-duration cfgs."""
    nonzero = values[values != 0]
    smallest = nonzero.min() if len(nonzero) else 0.0
    lower = _sorted_unique(values[values >= smallest])
    if len(lower) > 10_000 or not np.array_equal(lower, np.round(lower)):
        raise NotEvaluated(f"histogram {histogram.name!r}: columns computed from non-categorical values")
    column = np.searchsorted(lower, values).astype(np.int64)
    column[values < smallest] = -1
    return lower, column


def _within(histogram: Histogram, values: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Analyzer2D.Parameters: data range and burst-duration range, inclusive."""
    keep = np.ones(len(values), bool)
    if histogram.data_range is not None:
        keep &= (values >= histogram.data_range[0]) & (values <= histogram.data_range[1])
    if histogram.burst_range is not None:
        keep &= (durations >= histogram.burst_range[0]) & (durations <= histogram.burst_range[1])
    return keep
