"""Evaluate a cfg's timelines and histograms on a trace's cache, vectorised per window.

A first, deliberately small engine: thread-level rows; thread functions Useful, State As Is,
State Sign, Given State, State Record Dur., Int. Between Evt, Avg Next / Last Evt Val,
Last / Next Evt Val (with the event-type filter; Last composed by Stacked Val), what is in
transit (Send / Recv BandWidth, Bytes and Messages in Transit, Recv Negative *); the `As Is`
compose, `Sign` as topcompose; derived add, product,
substract, divide, maximum, minimum; histogram statistics Time, % Time, Sum bursts, # Bursts, Integral and Average value over
binned columns. Anything else raises NotEvaluated naming what popview cannot evaluate yet.
Times are in the trace's nanoseconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import comms
from .levels import (ADD_OBJECTS, COMPOSE_SLOT, CPU_FUNCTIONS, LEVEL_ORDER, PROCESS_LEVELS, RESOURCE_LEVELS,
                     Hierarchy, LevelError, broadcast_rows, not_thread_code, on_thread_rows, reduce_rows)
from .model import CfgView, Criterion, Function, Histogram, Window

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
    one_thread_per_task: bool = False  # task rows are thread rows (when no hierarchy is given)
    messages: dict[str, np.ndarray] | None = None   # send_loc, recv_loc, send_ and recv_ time, phys, size
    hierarchy: Hierarchy | None = None   # each thread's task, each task's application (and CPUs)

    def levels(self) -> Hierarchy:
        """Where each thread row sits (tasks, applications, CPUs); LevelError when not known."""
        if self.hierarchy is not None:
            return self.hierarchy
        if self.one_thread_per_task:
            return Hierarchy.one_thread_per_task(self.n_rows)
        raise LevelError("the tasks of the trace's threads are not known")

    @classmethod
    def from_cache(cls, reader, definitions) -> "TraceColumns":
        threads = [i for i, loc in enumerate(definitions.locations) if loc.kind == "thread"]
        if threads != list(range(len(threads))):
            raise NotEvaluated("thread locations are not the first locations of the trace")
        every = None if len(threads) == len(definitions.locations) else threads   # None: whole columns at once
        per_task = np.bincount([definitions.locations[i].process for i in threads]) if threads else np.zeros(0)
        messages = reader.read("messages", columns=["send_loc", "recv_loc", "send_time", "send_phys", "recv_time",
                                                 "recv_phys", "size", "tag"]) \
            if reader.has("messages") else None
        return cls(int(definitions.t_end), len(threads), reader.read("states", locations=every),
                   reader.read("events", locations=every), bool(len(per_task)) and bool((per_task == 1).all()),
                   messages, hierarchy_of(definitions))


def hierarchy_of(definitions) -> Hierarchy:
    """The thread rows' tasks (popview's processes, in Paraver's global task order) and the
    tasks' applications; the CPUs where the reader recorded them (each location's CPU in
    `flags['thread_cpus']`, each node's number of CPUs in `flags['cpus_per_node']`)."""
    threads = [loc for loc in definitions.locations if loc.kind == "thread"]
    thread_task = np.array([loc.process for loc in threads], np.int64)
    task_appl = np.array([p.appl for p in definitions.processes], np.int64)
    if len(thread_task) and len(task_appl) <= thread_task.max():
        task_appl = np.r_[task_appl, np.zeros(int(thread_task.max()) + 1 - len(task_appl), np.int64)]
    flags = definitions.flags or {}
    cpus, node_cpus = flags.get("thread_cpus"), flags.get("cpus_per_node")
    thread_cpu = None
    if cpus is not None and len(cpus) == len(definitions.locations):
        thread_cpu = np.array([c for c, loc in zip(cpus, definitions.locations) if loc.kind == "thread"], np.int64)
    return Hierarchy(thread_task, task_appl, thread_cpu, tuple(int(c) for c in node_cpus) if node_cpus else None)


# -- windows ---------------------------------------------------------------------------------

def evaluate_window(view: CfgView, position: int, trace: TraceColumns) -> Timeline:
    """A window's values per row, as the kernel's intervals nest: the thread function and
    compose_thread (a derived window: its parents combined at the finer of their levels, then
    that level's compose); for the resource model each CPU's thread (Active Thd ...) and
    compose_cpu; then level by level up to the window's own (task, appl, workload; node,
    system) that level's function over the rows below and its compose; then topcompose2 and
    last topcompose1 (IntervalCompose: topcompose1's child is topcompose2)."""
    window = view.window(position)
    name = f"window {position} {window.name!r}"
    if window.level not in LEVEL_ORDER:
        raise NotEvaluated(f"{name}: rows at {window.level} level")
    parents = []
    if window.derived:
        d = window.derivation
        if any(d.shifts):
            raise NotEvaluated(f"{name}: interval shifts")
        parents = [view.window(p) for p in d.parents]
        base = max((p.level for p in parents), key=lambda level: LEVEL_ORDER.get(level, 0))
        if any(_model(p.level) != _model(base) for p in parents):
            raise NotEvaluated(f"{name}: parents at {parents[0].level} and {parents[1].level} levels")
        first = [base]
    else:
        base = "thread"
        first = ["thread", "cpu"] if _model(window.level) == "resource" else ["thread"]
    up = _levels_up(first[-1], window.level)
    if up is None:
        raise NotEvaluated(f"{name}: rows at {window.level} level from rows at {first[-1]} level")
    slots = [COMPOSE_SLOT[level] for level in first + up] + ["topcompose2", "topcompose1"]
    stacked = [slot for slot, f in window.compose.items() if f.name == "Stacked Val"]
    by_points = not window.derived and _point_function(window) is not None and _rows_of_one_thread(window, trace)
    if by_points and any(window.compose.get(slot, Function("As Is")).name in SEQUENCE_COMPOSE for slot in slots):
        for slot in slots:
            function = window.compose.get(slot)
            if function is not None and function.name not in COMPOSE_FUNCTIONS and function.name not in SEQUENCE_COMPOSE:
                raise NotEvaluated(f"{name}: compose {function.name!r} ({slot})")
        return _point_window(window, trace, slots)
    # slots over rows above the window's first level: their intervals are the level's pieces, one by one
    level_slots = [COMPOSE_SLOT[level] for level in up] + (["topcompose2", "topcompose1"] if up else [])
    at_thread = not window.derived and bool(stacked) and _stacked_ok(window, stacked, slots, trace)
    for slot, function in window.compose.items():
        if function.name == "As Is" or (slot in slots and (function.name in COMPOSE_FUNCTIONS
                                                            or function.name == "Burst Time")):
            continue
        if function.name == "Stacked Val" and at_thread:
            continue
        if function.name in SEQUENCE_COMPOSE and slot in level_slots:
            continue
        if slot not in slots:
            continue                      # a level the window's values do not pass: not applied (as in Paraver)
        raise NotEvaluated(f"{name}: compose {function.name!r} ({slot})")
    if window.derived:
        timelines = []
        for parent in parents:
            timeline = evaluate_window(view, parent.position, trace)
            if parent.level != base:
                timeline = _broadcast(timeline, _hierarchy(trace, name), parent.level, base)
            timelines.append(timeline)
        timeline = _compose(_combine(d.operation, *timelines, d.factors, name), window, COMPOSE_SLOT[base])
    else:
        timeline = _compose(_single(window, trace), window, "compose_thread")
        if first[-1] == "cpu":
            timeline = _compose(_to_cpus(timeline, window, _hierarchy(trace, name), trace, name), window,
                                "compose_cpu")
    below = first[-1]
    for level in up:
        timeline = _rise(timeline, window, _hierarchy(trace, name), below, level, trace, name)
        timeline = _compose_pieces(timeline, window, COMPOSE_SLOT[level], trace, at_thread)
        below = level
    if up:
        return _compose_pieces(_compose_pieces(timeline, window, "topcompose2", trace, at_thread), window,
                               "topcompose1", trace, at_thread)
    return _compose(_compose(timeline, window, "topcompose2"), window, "topcompose1")


def _compose_pieces(timeline: Timeline, window: Window, slot: str, trace: TraceColumns, at_thread: bool) -> Timeline:
    """A compose over rows of a level above the thread: without memory on every piece; with a
    memory of the row's sequence (Stacked Val, Nesting level, Delta, Join Bursts, Burst Time)
    over the row's pieces in order, each one interval of the kernel's (IntervalNotThread: the
    level's rows start an interval at every boundary of their children's)."""
    function = window.compose.get(slot)
    if function is None or function.name not in SEQUENCE_COMPOSE or (function.name == "Stacked Val" and at_thread):
        return _compose(timeline, window, slot)
    loc, time, value = _compose_sequence(function, timeline.row.astype(np.int64), timeline.begin, timeline.value,
                                         trace, window)
    return point_intervals(loc, time, value, timeline.n_rows, trace.t_end)


def on_threads(timeline: Timeline, window: Window, trace: TraceColumns) -> Timeline:
    """A window's rows drawn on the trace's thread rows (popview's timeline rows): each thread
    shows the values of its task (application, ...; CPU, node, ...) row."""
    if window.level == "thread":
        return timeline
    index, row = on_thread_rows(timeline.row, window.level, _hierarchy(trace, f"window {window.position}"))
    return Timeline(row.astype(np.int32), timeline.begin[index], timeline.end[index], timeline.value[index],
                    trace.n_rows)


def _single_slots(window: Window) -> list[str]:
    """The compose slots a single window's values pass, in the kernel's order."""
    first = ["thread", "cpu"] if _model(window.level) == "resource" else ["thread"]
    up = _levels_up(first[-1], window.level) or []
    return [COMPOSE_SLOT[level] for level in first + up] + ["topcompose2", "topcompose1"]


def _model(level: str) -> str:
    return "resource" if level in RESOURCE_LEVELS else "process"


def _levels_up(base: str, level: str) -> list[str] | None:
    """The levels above `base` up to `level` in base's model, in order; None if `level` is not one."""
    chain = RESOURCE_LEVELS if base in RESOURCE_LEVELS else PROCESS_LEVELS
    if level not in chain or chain.index(level) < chain.index(base):
        return None
    return list(chain[chain.index(base) + 1:chain.index(level) + 1])


def _hierarchy(trace: TraceColumns, name: str) -> Hierarchy:
    try:
        return trace.levels()
    except LevelError as exc:
        raise NotEvaluated(f"{name}: {exc}") from None


def _compose(timeline: Timeline, window: Window, slot: str) -> Timeline:
    """A compose function without memory applied to every interval (Stacked Val is applied
    to the events, As Is leaves the values)."""
    function = window.compose.get(slot)
    if function is not None and function.name in COMPOSE_FUNCTIONS and function.name != "As Is":
        timeline.value = COMPOSE_FUNCTIONS[function.name](timeline.value, function.params)
    elif function is not None and function.name == "Burst Time":       # each interval's duration
        timeline.value = (timeline.end - timeline.begin) / window_unit_ns(window)
    return timeline


def _rise(timeline: Timeline, window: Window, hierarchy: Hierarchy, below: str, level: str, trace: TraceColumns,
          name: str) -> Timeline:
    """The rows of `level` from those of `below`: its function over each row's children."""
    function = window.functions.get(level) or Function("Adding")
    if function.name == "Changed value":     # the value of the child that changed last: of one child, its own
        try:
            children = np.bincount(hierarchy.parent_of(below), minlength=hierarchy.n_rows(level))
        except LevelError as exc:
            raise NotEvaluated(f"{name}: {exc}") from None
        if (children != 1).any():
            raise NotEvaluated(f"{name}: {level} function 'Changed value' over rows of several {below}s")
        function = Function("Adding")
    code = not_thread_code(function.name)
    if code is None:
        raise NotEvaluated(f"{name}: {level} function {function.name!r}")
    try:
        parent_of, n_parents = hierarchy.parent_of(below), hierarchy.n_rows(level)
    except LevelError as exc:
        raise NotEvaluated(f"{name}: {exc}") from None
    params = np.asarray(function.params[0] if function.params else (), np.float64)
    if code == ADD_OBJECTS and len(params) and (params.min() < 0 or
                                                params.max() >= np.bincount(parent_of, minlength=n_parents).min()):
        raise NotEvaluated(f"{name}: {level} function {function.name!r} names a {below} the rows do not all have")
    row, begin, end, value = reduce_rows(timeline.row, timeline.begin, timeline.end, timeline.value, parent_of,
                                         n_parents, trace.t_end, code, params)
    return Timeline(row.astype(np.int32), begin, end, value, n_parents)


def _broadcast(timeline: Timeline, hierarchy: Hierarchy, level: str, finer: str) -> Timeline:
    """A coarser parent of a derived window at the finer rows: each row its own ancestor's values."""
    owner = hierarchy.ancestor(np.arange(hierarchy.n_rows(finer)), finer, level)
    index, row = broadcast_rows(timeline.row, owner)
    return Timeline(row.astype(np.int32), timeline.begin[index], timeline.end[index], timeline.value[index],
                    hierarchy.n_rows(finer))


def _to_cpus(timeline: Timeline, window: Window, hierarchy: Hierarchy, trace: TraceColumns, name: str) -> Timeline:
    """CPU rows: the values of the thread that runs on each CPU, through the CPU function
    (Active Thd: as they are; Sign: 1 where not 0; Val: only the given values; Val Sign: 1 there)."""
    function = window.functions.get("cpu") or Function("Active Thd")
    if function.name not in CPU_FUNCTIONS:
        raise NotEvaluated(f"{name}: cpu function {function.name!r}")
    try:
        threads = hierarchy.cpu_threads()
    except LevelError as exc:
        raise NotEvaluated(f"{name}: {exc}") from None
    idle = np.flatnonzero(threads < 0)
    owner = np.where(threads < 0, 0, threads)
    index, row = broadcast_rows(timeline.row, owner)
    value = timeline.value[index]
    begin, end = timeline.begin[index], timeline.end[index]
    keep = threads[row] >= 0
    row, begin, end, value = row[keep], begin[keep], end[keep], value[keep]
    if len(idle):                       # a CPU no thread runs on: 0 throughout
        row, begin = np.r_[row, idle], np.r_[begin, np.zeros(len(idle), np.int64)]
        end, value = np.r_[end, np.full(len(idle), trace.t_end, np.int64)], np.r_[value, np.zeros(len(idle))]
        order = np.lexsort((begin, row))
        row, begin, end, value = row[order], begin[order], end[order], value[order]
    given = np.asarray(function.params[0] if function.params else (), np.float64)
    if function.name == "Active Thd Sign":
        value = (value != 0).astype(np.float64)
    elif function.name == "Active Thd Val":
        value = np.where(np.isin(value, given), value, 0.0)
    elif function.name == "Active Thd Val Sign":
        value = np.isin(value, given).astype(np.float64)
    return Timeline(row.astype(np.int32), begin, end, value, len(threads))


def _stacked_ok(window: Window, stacked: list[str], slots: list[str], trace: TraceColumns) -> bool:
    """Stacked Val composes the values of a Last Evt Val window event by event: in one slot the
    window's values pass through when the slots before it (in the kernel's order) pass the
    values as they are (or their Sign), and above the thread level only when each row is one thread (a row of
    several threads is cut at each of their boundaries: a sequence of values Stacked Val is not
    evaluated on yet); the slots after it compose its result."""
    function = window.functions.get("thread")
    if len(stacked) != 1 or stacked[0] not in slots or function is None or function.name != "Last Evt Val":
        return False
    before = slots[:slots.index(stacked[0])]
    # As Is, or Sign: a stack of signs pushes and pops as the stack of the values does, so its
    # top is the sign of their top (Sign is then applied after it, in its own slot)
    if not all(window.compose.get(slot, Function("As Is")).name in ("As Is", "Sign") for slot in before):
        return False
    if window.level == "thread" or stacked[0] == "compose_thread":
        return True
    if window.level not in PROCESS_LEVELS:
        return False
    try:
        hierarchy = trace.levels()
        owners = hierarchy.ancestor(np.arange(hierarchy.n_rows("thread")), "thread", window.level)
    except LevelError:
        return False
    return len(np.unique(owners)) == len(owners)


def _param(params, index: int, default: float) -> np.ndarray:
    values = params[index] if len(params) > index and params[index] else (default,)
    return np.asarray(values, np.float64)


def _in_ranges(value: np.ndarray, params) -> np.ndarray:
    """Select Range / Is In Range: within one of the [minimum, maximum] pairs (parameters
    maximum first, then minimum, as the kernel's MAXVALUE, MINVALUE)."""
    high, low = _param(params, 0, np.inf), _param(params, 1, -np.inf)
    n = min(len(high), len(low))
    inside = np.zeros(len(value), bool)
    for a, b in zip(low[:n], high[:n]):
        inside |= (value >= a) & (value <= b)
    return inside


def _divide(value: np.ndarray, params) -> np.ndarray:
    divider = float(_param(params, 0, 1.0)[0])
    return value / divider if divider != 0 else np.fmod(value, 1.0)


# Compose functions without memory, as semanticcomposefunctions.cpp computes them (value, params)
COMPOSE_FUNCTIONS = {
    "As Is": lambda v, p: v,
    "Sign": lambda v, p: (v != 0).astype(np.float64),
    "1-Sign": lambda v, p: (v == 0).astype(np.float64),
    "Div": _divide,
    "Prod": lambda v, p: v * float(_param(p, 0, 1.0)[0]),
    "Select Range": lambda v, p: np.where(_in_ranges(v, p), v, 0.0),
    "Is In Range": lambda v, p: _in_ranges(v, p).astype(np.float64),
    "Add": lambda v, p: v + float(_param(p, 0, 0.0)[0]),
    "Subs": lambda v, p: v - float(_param(p, 0, 0.0)[0]),
    "Is Equal": lambda v, p: np.where(np.isin(v, _param(p, 0, np.nan)), v, 0.0),
    "Is Equal (Sign)": lambda v, p: np.isin(v, _param(p, 0, np.nan)).astype(np.float64),
    "Abs": lambda v, p: np.abs(v),
    "Floor": lambda v, p: np.floor(v),
    "Ceil": lambda v, p: np.ceil(v),
    "Round": lambda v, p: np.round(v),
}
UNIT_NS = {"Nanoseconds": 1.0, "Microseconds": 1e3, "Milliseconds": 1e6, "Seconds": 1e9,
           "Hours": 3600e9, "Days": 86400e9}


# A cfg window without window_units is in microseconds: the kernel's cfg loader sets US when it
# reads window_type ("Default value from old paraver code", api/cfg.cpp), before any window_units.
CFG_DEFAULT_UNITS = "Microseconds"


def window_units(window: Window) -> str:
    """The window's time unit: its window_units, else the cfg loader's default."""
    return window.units or CFG_DEFAULT_UNITS


def window_unit_ns(window: Window) -> float:
    """Nanoseconds per unit of the window's time unit (window_units; microseconds when not given)."""
    if window.units is not None and window.units not in UNIT_NS:
        raise NotEvaluated(f"window {window.position} {window.name!r}: time unit {window.units!r}")
    return UNIT_NS[window_units(window)]




def tiled_states(trace: TraceColumns) -> dict[str, np.ndarray]:
    """The trace's state records with Paraver's state 0 (Idle) where a thread has none: before
    its first record, between records and after its last one up to the trace's end (a Paraver
    thread has a state at every instant; paramedir's total_runtime.cfg counts the whole run per
    thread)."""
    s = trace.states
    loc, begin, end = s["loc"].astype(np.int64), s["begin"].astype(np.int64), s["end"].astype(np.int64)
    first = np.r_[True, loc[1:] != loc[:-1]] if len(loc) else np.zeros(0, bool)
    last = np.r_[loc[1:] != loc[:-1], True] if len(loc) else np.zeros(0, bool)
    previous = np.r_[0, end[:-1]] if len(end) else np.zeros(0, np.int64)
    previous[first] = 0
    before = begin > previous
    after = last & (end < trace.t_end)
    empty = np.setdiff1d(np.arange(trace.n_rows), loc)
    gap_loc = np.r_[loc[before], loc[after], empty]
    if len(gap_loc) == 0:
        return s
    gap_begin = np.r_[previous[before], end[after], np.zeros(len(empty), np.int64)]
    gap_end = np.r_[begin[before], np.full(int(after.sum()) + len(empty), trace.t_end, np.int64)]
    all_loc = np.r_[loc, gap_loc]
    all_begin = np.r_[begin, gap_begin]
    order = np.lexsort((all_begin, all_loc))
    return {"loc": all_loc[order].astype(s["loc"].dtype), "begin": all_begin[order],
            "end": np.r_[end, gap_end][order],
            "state": np.r_[s["state"], np.zeros(len(gap_loc), s["state"].dtype)][order]}


def _tail_gaps(trace: TraceColumns, tiled: dict[str, np.ndarray]) -> np.ndarray:
    """The Idle intervals `tiled_states` adds after a row's last state record. Paraver's State
    Record Dur. of Idle there is the record's time itself: timeToNextState finds no next state
    and returns the time it started from (parami's state_duration.cfg, paramedir's dump)."""
    loc = trace.states["loc"].astype(np.int64)
    if len(loc) == 0:
        return np.zeros(len(tiled["loc"]), bool)
    last = np.r_[loc[1:] != loc[:-1], True]
    last_end = np.full(trace.n_rows, -1, np.int64)
    last_end[loc[last]] = trace.states["end"][last]
    rows = tiled["loc"].astype(np.int64)
    return (tiled["state"] == 0) & (tiled["begin"] == last_end[rows]) & (tiled["end"] > tiled["begin"])


def _single(window: Window, trace: TraceColumns) -> Timeline:
    function = window.functions.get("thread")
    name = function.name if function else None
    if name in ("Useful", "State As Is", "State Sign", "Given State", "State Record Dur."):
        s = tiled_states(trace)
        value = s["state"].astype(np.float64)
        if name == "State Record Dur.":      # the state's duration in the window's units when it is a given one
            given = np.asarray(function.params[0] if function.params else (RUNNING,), np.float64)
            duration = (s["end"] - s["begin"]).astype(np.float64)
            if (given == 0).any():           # Idle after a row's last record: no next state (timeToNextState)
                duration = np.where(_tail_gaps(trace, s), s["begin"], duration)
            return Timeline(s["loc"].astype(np.int32), s["begin"], s["end"],
                            np.where(np.isin(value, given), duration / window_unit_ns(window), 0.0), trace.n_rows)
        if name == "Useful":
            value = (s["state"] == RUNNING).astype(np.float64)
        elif name == "State Sign":
            value = (s["state"] != 0).astype(np.float64)
        elif name == "Given State":          # the state when it is one of the given ones, else 0
            given = np.asarray(function.params[0] if function.params else (), np.float64)
            value = np.where(np.isin(value, given), value, 0.0)
        return Timeline(s["loc"].astype(np.int32), s["begin"], s["end"], value, trace.n_rows)
    if name in ("Next Evt Val", "Last Evt Val"):
        stacked = any(f.name == "Stacked Val" for slot, f in window.compose.items() if slot in _single_slots(window))
        if stacked and name != "Last Evt Val":
            raise NotEvaluated(f"window {window.position} {window.name!r}: compose 'Stacked Val' over {name!r}")
        return _event_values(window, trace, following=name == "Next Evt Val", stacked=stacked)
    if name == "Int. Between Evt":
        return _event_values(window, trace, following=False, between=True)
    if name in ("Avg Next Evt Val", "Avg Last Evt Val"):     # the value x factor per window time unit
        factor = float(function.params[0][0]) if function.params and function.params[0] else 1.0
        return _event_values(window, trace, following=name == "Avg Next Evt Val", per_time=factor)
    if name in comms.IN_TRANSIT:
        _require_messages(window, trace)
        loc, time, value = _comms_call(comms.in_transit_points, window, trace, name, window_unit_ns(window))
        return point_intervals(loc, time, value, trace.n_rows, trace.t_end)
    if name in ("In Evt Range", "In Evt Val", "Not In Evt Val", "Given Evt Val"):
        loc, time, value = _points(window, trace)
        return point_intervals(loc, time, value, trace.n_rows, trace.t_end)
    if name in comms.RECORD_FUNCTIONS:
        _require_messages(window, trace)
        loc, time, value = _comms_call(comms.record_function, window, trace, name, window_unit_ns(window))
        return point_intervals(loc, time, value, trace.n_rows, trace.t_end)
    if name in ("Event Bytes", "Event Sent Bytes"):
        _require_messages(window, trace)
        loc, time, _ = selected_events(window, trace)
        return point_intervals(loc, time, _comms_call(comms.event_bytes, window, trace, loc, time,
                                                      sent_only=name == "Event Sent Bytes"),
                               trace.n_rows, trace.t_end)
    if name in OBJECT_IDS:
        return _object_ids(window, name, trace)
    raise NotEvaluated(f"window {window.position} {window.name!r}: thread function {name!r}")


# The thread functions naming the row's objects (semanticthreadfunctions.cpp), 1-based
OBJECT_IDS = ("Application ID", "TaskID", "Thread ID", "Node ID", "Cpu ID")


def _object_ids(window: Window, name: str, trace: TraceColumns) -> Timeline:
    """Application ID, TaskID, Thread ID: the row's application, task or thread (1-based) from
    the trace's start; Node ID, Cpu ID: the node or CPU (1-based) of each record's CPU, 0 before
    the row's first record (the kernel's empty record) -- evaluated where each thread's records
    carry one CPU. Intervals start at every state begin and end and every event the window's
    filter passes (the functions' records: STATE + EVENT)."""
    hierarchy = _hierarchy(trace, f"window {window.position} {window.name!r}")
    threads = np.arange(trace.n_rows)
    if name in ("Node ID", "Cpu ID"):
        cpu = hierarchy.thread_cpu
        if cpu is None or hierarchy.node_cpus is None:
            raise NotEvaluated(f"window {window.position} {window.name!r}: the CPU of each thread is not known "
                               "(reconvert the trace)")
        with_records = np.zeros(trace.n_rows, bool)
        with_records[np.asarray(trace.states["loc"], np.int64)] = True
        with_records[np.asarray(trace.events["loc"], np.int64)] = True
        if (np.asarray(cpu)[with_records] < 0).any():
            raise NotEvaluated(f"window {window.position} {window.name!r}: {name} of threads whose records carry "
                               "several CPUs")
        ids = np.where(cpu >= 0, cpu + 1, 0) if name == "Cpu ID" else \
            np.where(cpu >= 0, hierarchy.ancestor(np.maximum(cpu, 0), "cpu", "node") + 1, 0)
    elif name == "Application ID":
        ids = hierarchy.task_appl[hierarchy.thread_task] + 1
    else:
        ids = (hierarchy.thread_task if name == "TaskID" else threads) + 1
    s = trace.states
    e_loc, e_time, _ = selected_events(window, trace)
    loc = np.r_[np.asarray(s["loc"], np.int64), np.asarray(s["loc"], np.int64), e_loc]
    time = np.r_[np.asarray(s["begin"], np.int64), np.asarray(s["end"], np.int64), np.asarray(e_time, np.int64)]
    value = ids[loc].astype(np.float64)
    if name not in ("Node ID", "Cpu ID"):       # not 0 on the empty first record
        loc, time, value = np.r_[threads, loc], np.r_[np.zeros(trace.n_rows, np.int64), time], np.r_[ids, value]
    order = np.lexsort((time, loc))
    return point_intervals(loc[order], time[order], value[order].astype(np.float64), trace.n_rows, trace.t_end)


def _require_messages(window, trace) -> None:
    """A trace without communications has no communication records: the functions that read
    them give 0 (as paramedir writes), read from an empty set of messages."""
    del window
    if trace.messages is None:
        trace.messages = no_messages()


def no_messages() -> dict[str, np.ndarray]:
    """The message columns of a trace that has none."""
    from popview.cache.schema import empty
    return empty("messages")


def _comms_call(function, window, trace, *args, **kwargs):
    """A communication function of comms.py; a filter it cannot apply is named, not guessed."""
    try:
        return function(window, trace, *args, **kwargs)
    except comms.FilterError as exc:
        raise NotEvaluated(f"window {window.position} {window.name!r}: {exc}") from None


def _selected_types(criterion: Criterion | None, types: np.ndarray, name: str, what: str = "type") -> np.ndarray:
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
    if criterion.function in ("<", ">") and len(wanted) == 1:
        return types < wanted[0] if criterion.function == "<" else types > wanted[0]
    raise NotEvaluated(f"{name}: event {what} filter {criterion.function!r} with {len(wanted)} values")


def _depth(loc: np.ndarray, push: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row in order, one up for each push and one down (not below 0) for each other:
    the depth after each step (Paraver's Nesting level), and each step's row number. The walk
    of +1 / -1 steps reflected at 0: depth = S - min(0, running min of S) per row."""
    n = len(loc)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    step = np.where(push, 1, -1).astype(np.int64)
    total = np.cumsum(step)
    starts = np.r_[True, loc[1:] != loc[:-1]]
    row_index = np.cumsum(starts) - 1
    before = np.r_[0, total[:-1]][starts][row_index]          # the walk before each row
    walk = total - before
    big = 4 * n + 4                                              # rows kept apart in one running minimum
    lowest = np.minimum.accumulate(walk - row_index * big) + row_index * big
    return walk - np.minimum(lowest, 0), row_index


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
    depth, row_index = _depth(loc, push)
    # the top: the last push j <= i of the row with depth[j] == depth[i]
    span = int(depth.max()) + 1
    group = row_index * span + depth
    pushes = np.flatnonzero(push)
    order = np.lexsort((pushes, group[pushes]))
    keys = group[pushes][order] * (n + 1) + pushes[order]
    at = np.searchsorted(keys, group * (n + 1) + np.arange(n), side="right") - 1
    found = (at >= 0) & (keys[np.clip(at, 0, None)] // (n + 1) == group) & (depth > 0)
    return np.where(found, value[pushes[order][np.clip(at, 0, None)]], 0.0)


def selected_events(window: Window, trace: TraceColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The events the window's event filter passes: (row, time, value) sorted by row and time,
    events at one instant in the trace's order."""
    name = f"window {window.position} {window.name!r}"
    criteria = window.filters.criteria
    e = trace.events
    keep = _selected_types(criteria.get("evt_type"), e["type"].astype(np.int64), name)
    by_value = criteria.get("evt_value", Criterion())
    if by_value.function != "All":
        if window.filters.typeval_and is False:
            raise NotEvaluated(f"{name}: event type OR value filter")
        keep &= _selected_types(by_value, e["value"].astype(np.int64), name, "value")
    loc, time, value = e["loc"][keep].astype(np.int64), e["time"][keep], e["value"][keep].astype(np.float64)
    order = np.lexsort((time, loc))          # stable: events at one instant keep the trace's order
    return loc[order], time[order], value[order]


def point_intervals(loc: np.ndarray, time: np.ndarray, value: np.ndarray, n_rows: int, t_end: int) -> Timeline:
    """Intervals from points sorted by row and time, each holding its value up to the row's next
    point (the last one up to the trace's end), 0 before a row's first point; of points at one
    instant the last one's value holds (the intervals between them have no duration)."""
    last = np.r_[(loc[1:] != loc[:-1]) | (time[1:] != time[:-1]), True] if len(loc) else np.zeros(0, bool)
    loc, time, value = loc[last], time[last].astype(np.int64), value[last]
    per_row = np.bincount(loc, minlength=n_rows)
    first = np.r_[0, np.cumsum(per_row + 1)][:-1]
    n = int((per_row + 1).sum())
    row = np.repeat(np.arange(n_rows), per_row + 1).astype(np.int32)
    begin, end, vals = np.zeros(n, np.int64), np.full(n, t_end, np.int64), np.zeros(n, np.float64)
    index = np.arange(len(loc)) - np.r_[0, np.cumsum(per_row)][loc] + first[loc]
    end[index], begin[index + 1], vals[index + 1] = time, time, value
    inside = end > begin
    return Timeline(row[inside], begin[inside], end[inside], vals[inside], n_rows)


# Compose functions with a memory of the row's sequence of intervals (semanticcomposefunctions.cpp,
# intervalcompose.cpp: Join Bursts joins intervals): evaluated on the sequence of the row's
# intervals, those of no duration included, for windows whose intervals start at records
# popview has one by one (events, communication records).
SEQUENCE_COMPOSE = ("Stacked Val", "Nesting level", "Join Bursts", "Burst Time", "Delta")
EVENT_FUNCTIONS = ("Last Evt Val", "Next Evt Val", "Int. Between Evt", "Avg Next Evt Val", "Avg Last Evt Val",
                   "Event Bytes", "Event Sent Bytes", "In Evt Range", "In Evt Val", "Not In Evt Val", "Given Evt Val")


def _of_last_event(name: str, value: np.ndarray, params) -> np.ndarray:
    """The event functions of the last selected event's value (semanticthreadfunctions.cpp):
    In Evt Range (1 within [minimum, maximum]), In Evt Val (1 for a given value), Not In Evt Val
    (1 for any other), Given Evt Val (the value when given, else 0)."""
    given = np.asarray(params[0] if params else (), np.float64)
    if name == "In Evt Range":
        low, high = _param(params, 0, 0.0)[0], _param(params, 1, 0.0)[0]
        return ((value >= low) & (value <= high)).astype(np.float64)
    if name == "In Evt Val":
        return np.isin(value, given).astype(np.float64)
    if name == "Not In Evt Val":
        return (~np.isin(value, given)).astype(np.float64)
    return np.where(np.isin(value, given), value, 0.0)


def _point_function(window: Window) -> str | None:
    function = window.functions.get("thread")
    if function is not None and (function.name in EVENT_FUNCTIONS or function.name in comms.RECORD_FUNCTIONS
                                 or function.name in comms.IN_TRANSIT):
        return function.name
    return None


def _points(window: Window, trace: TraceColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The row's intervals as the kernel walks them, one per record that starts one: (row, time,
    value) sorted by row, each row starting with the interval from the trace's start (the
    kernel's empty first record), then one per selected event (or communication record),
    several at one instant included; each lasts up to the next one (the last to the trace's end)."""
    function = window.functions.get("thread")
    name = function.name
    if name in comms.RECORD_FUNCTIONS or name in comms.IN_TRANSIT:
        _require_messages(window, trace)
        function_of = comms.record_function if name in comms.RECORD_FUNCTIONS else comms.in_transit_points
        loc, time, value = _comms_call(function_of, window, trace, name, window_unit_ns(window))
        first = np.zeros(trace.n_rows)
    else:
        loc, time, value = selected_events(window, trace)
        time, raw = time.astype(np.int64), value
        n = len(loc)
        has_next = np.r_[loc[1:] == loc[:-1], False] if n else np.zeros(0, bool)
        following = np.r_[value[1:], 0.0] if n else value
        gap = (np.r_[time[1:], 0] - time) / window_unit_ns(window) if n else np.zeros(0)
        per_row = np.bincount(loc, minlength=trace.n_rows)
        row_first = np.r_[0, np.cumsum(per_row)][:-1]
        has_first = per_row > 0
        first = np.zeros(trace.n_rows)
        factor = float(function.params[0][0]) if function.params and function.params[0] else 1.0
        if name == "Last Evt Val":
            pass
        elif name in ("In Evt Range", "In Evt Val", "Not In Evt Val", "Given Evt Val"):
            value = _of_last_event(name, value, function.params)
        elif name == "Next Evt Val":              # the next event from the empty first record too
            value = np.where(has_next, following, 0.0)
            first[has_first] = raw[row_first[has_first]]
        elif name == "Int. Between Evt":
            value = np.where(has_next, gap, 0.0)
        elif name in ("Avg Next Evt Val", "Avg Last Evt Val"):
            ok = has_next & (gap != 0)
            source = following if name == "Avg Next Evt Val" else value
            value = np.where(ok, source * factor / np.where(ok, gap, 1.0), 0.0)
            if name == "Avg Next Evt Val":        # from the empty first record to the row's first event
                t0 = time[row_first[has_first]] / window_unit_ns(window)
                v0 = raw[row_first[has_first]]
                first[has_first] = np.where(t0 != 0, v0 * factor / np.where(t0 != 0, t0, 1.0), 0.0)
        else:                                     # Event Bytes, Event Sent Bytes
            _require_messages(window, trace)
            value = _comms_call(comms.event_bytes, window, trace, loc, time, sent_only=name == "Event Sent Bytes")
    rows = np.arange(trace.n_rows)
    all_loc = np.r_[rows, loc.astype(np.int64)]
    all_time = np.r_[np.zeros(trace.n_rows, np.int64), time.astype(np.int64)]
    all_value = np.r_[first, value.astype(np.float64)]
    order = np.argsort(all_loc, kind="stable")            # each row's start first, then its records in order
    return all_loc[order], all_time[order], all_value[order]


# Task functions that give a task of one thread its thread's value ("Thread i": of thread 1)
TASK_OF_ONE_THREAD = ("Adding", "Average", "Maximum", "Minimum", "Thread i")


def _rows_of_one_thread(window: Window, trace: TraceColumns) -> bool:
    """The window's rows are threads, or tasks of one thread each whose task function passes
    that thread's value (or 0: Thread i of another thread)."""
    if window.level == "thread":
        return True
    if window.level != "task" or not trace.one_thread_per_task:
        return False
    function = window.functions.get("task")
    return function is None or function.name in TASK_OF_ONE_THREAD


def _task_is_zero(function: Function | None) -> bool:
    """ObjectI ("Thread i") takes the i-th thread, 1-based: 0 for any i but 1 in a one-thread task."""
    if function is None or function.name != "Thread i":
        return False
    i = function.params[0][0] if function.params and function.params[0] else 0
    return i != 1


def _point_window(window: Window, trace: TraceColumns, slots: list[str]) -> Timeline:
    """A window whose compose functions remember the row's sequence of intervals, computed on
    that sequence (_points): compose_thread (task rows of one thread each: the task function
    over the one thread, compose_task), then topcompose2 and topcompose1, as the kernel composes
    interval by interval."""
    loc, time, value = _points(window, trace)
    task_function = window.functions.get("task")
    for slot in slots:
        function = window.compose.get(slot)
        if function is not None:
            loc, time, value = _compose_sequence(function, loc, time, value, trace, window)
        if slot == "compose_thread" and "compose_task" in slots and _task_is_zero(task_function):
            value = np.zeros_like(value)
    return point_intervals(loc, time, value, trace.n_rows, trace.t_end)


def _compose_sequence(function: Function, loc: np.ndarray, time: np.ndarray, value: np.ndarray, trace: TraceColumns,
                      window: Window) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One compose function over the rows' sequences of intervals, each given by its start
    (loc, time, value; sorted by row, then time), as the kernel composes interval by interval."""
    name = function.name
    if name in COMPOSE_FUNCTIONS:
        value = COMPOSE_FUNCTIONS[name](value, function.params)
    elif name == "Stacked Val":
        value = _stacked(loc, value)
    elif name == "Nesting level":
        value = _depth(loc, value != 0)[0].astype(np.float64)
    elif name == "Delta":              # the change from the row's previous value (0 before its first)
        starts = np.r_[True, loc[1:] != loc[:-1]] if len(loc) else np.zeros(0, bool)
        previous = np.where(starts, 0.0, np.r_[0.0, value[:-1]])
        value = value - previous
    elif name == "Join Bursts":        # consecutive intervals of one value are one
        keep = np.r_[True, (loc[1:] != loc[:-1]) | (value[1:] != value[:-1])] if len(loc) else np.zeros(0, bool)
        loc, time, value = loc[keep], time[keep], value[keep]
    elif name == "Burst Time":         # the interval's duration in the window's units
        ends = np.r_[(loc[1:] != loc[:-1]), True] if len(loc) else np.zeros(0, bool)
        following = np.where(ends, trace.t_end, np.r_[time[1:], 0])
        value = (following - time) / window_unit_ns(window)
    return loc, time, value


def _event_values(window: Window, trace: TraceColumns, following: bool, stacked: bool = False,
                  between: bool = False, per_time: float | None = None) -> Timeline:
    """Intervals between consecutive selected events of each row; the value of the event that
    ends (Next) or starts (Last) each interval, 0 where there is none. With `stacked`, each
    event's value is first composed by Stacked Val over all the row's events (several at one
    instant included)."""
    loc, time, value = selected_events(window, trace)
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


def _align(timelines: list[Timeline]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """The timelines on the union of their boundaries: (row, begin, end, each one's values
    there, 0 where it has no interval)."""
    span = np.int64(max(int(t.end.max(initial=0)) for t in timelines) + 1)
    keys = [t.row.astype(np.int64) * span + t.begin for t in timelines]
    ends = [t.row.astype(np.int64) * span + t.end for t in timelines]
    cuts = _sorted_unique(np.concatenate(keys + ends))
    begin_key, end_key = cuts[:-1], cuts[1:]
    same_row = (begin_key // span == (end_key - 1) // span) & (end_key - begin_key // span * span < span)
    begin_key, end_key = begin_key[same_row], end_key[same_row]       # no segment across two rows
    values = []
    for timeline, key, stop in zip(timelines, keys, ends):
        at = np.searchsorted(key, begin_key, side="right") - 1
        inside = (at >= 0) & (stop[np.clip(at, 0, None)] > begin_key)
        values.append(np.where(inside, timeline.value[np.clip(at, 0, None)], 0.0))
    row = begin_key // span
    return row.astype(np.int32), begin_key - row * span, end_key - row * span, values


CONTROLLED = ("controlled: maximum", "controlled: clear by")


def _controlled(operation: str, data: Timeline, control: Timeline, factor: float) -> Timeline:
    """A controlled derived window (IntervalControlDerived): the intervals of the second parent
    (the control), each valued from the first parent's (the data's) intervals that overlap it,
    taken in time order. `controlled: maximum`: the largest of 0 and the data values there.
    `controlled: clear by`: as paramedir computes it (checked against it on EPOCH and heat 2x2):
    a control value lower than the one before clears (0) and marks the data interval then current;
    otherwise the data value, unless that data interval is the marked one."""
    span = np.int64(max(int(data.end.max(initial=0)), int(control.end.max(initial=0))) + 1)
    row, begin, end, _ = _align([data, control])
    key = row.astype(np.int64) * span + begin
    c_key = control.row.astype(np.int64) * span + control.begin
    d_key = data.row.astype(np.int64) * span + data.begin
    ci = np.searchsorted(c_key, key, side="right") - 1
    di = np.searchsorted(d_key, key, side="right") - 1
    c_ok = (ci >= 0) & (control.row[np.clip(ci, 0, None)] == row) & (control.end[np.clip(ci, 0, None)] > begin)
    d_ok = (di >= 0) & (data.row[np.clip(di, 0, None)] == row) & (data.end[np.clip(di, 0, None)] > begin)
    row, begin, ci, di, d_ok = row[c_ok], begin[c_ok], ci[c_ok], np.clip(di[c_ok], 0, None), d_ok[c_ok]
    dv = np.where(d_ok, data.value[di], 0.0) * factor
    db = np.where(d_ok, data.begin[di], -1)
    n = len(ci)
    if operation == "controlled: maximum":
        result = np.maximum(dv, 0.0)
    else:
        cv = control.value[ci]
        first = np.r_[True, row[1:] != row[:-1]] if n else np.zeros(0, bool)
        last_cv = np.where(first, 0.0, np.r_[0.0, cv[:-1]])
        clear = cv < last_cv
        # the data interval marked by the row's latest clear before each step (0: none yet)
        marked_at = np.maximum.accumulate(np.where(clear, np.arange(n), -1)) if n else np.zeros(0, np.int64)
        before = np.r_[-1, marked_at[:-1]] if n else marked_at
        row_start = np.maximum.accumulate(np.where(first, np.arange(n), 0)) if n else marked_at
        before = np.where(before >= row_start, before, -1)
        marked = np.where(before >= 0, db[np.clip(before, 0, None)], 0)
        result = np.where(clear, 0.0, np.where((marked != db) | (db == 0), dv, 0.0))
    # each control interval: the value after its last step (maximum: over all its steps)
    values = np.zeros(len(control.value))
    if n:
        starts = np.r_[0, np.flatnonzero(ci[1:] != ci[:-1]) + 1]
        if operation == "controlled: maximum":
            values[ci[starts]] = np.maximum.reduceat(result, starts)
        else:
            ends = np.r_[starts[1:] - 1, n - 1]
            values[ci[ends]] = result[ends]
    return Timeline(control.row.copy(), control.begin.copy(), control.end.copy(), values, control.n_rows)


def _combine(operation: str, left: Timeline, right: Timeline, factors, name: str) -> Timeline:
    """Pointwise op(f0 * left, f1 * right) on the union of both windows' boundaries; a
    controlled operation on the second window's intervals (_controlled)."""
    if operation in CONTROLLED:
        return _controlled(operation, left, right, factors[0])
    if operation not in _OPERATIONS:
        raise NotEvaluated(f"{name}: derived operation {operation!r}")
    row, begin, end, (a, b) = _align([left, right])
    return Timeline(row, begin, end, _OPERATIONS[operation](a * factors[0], b * factors[1]), left.n_rows)


# -- histograms ------------------------------------------------------------------------------

@dataclass
class HistogramTable:
    """Per row and column (and plane, 3D): the statistic; `columns` gives each column's lower
    bound, `planes` each plane's (None in 2D, where `table` is (rows, columns); in 3D it is
    (planes, rows, columns) and `counted` says which planes have values)."""
    columns: np.ndarray
    table: np.ndarray
    statistic: str
    planes: np.ndarray | None = None
    counted: np.ndarray | None = None
    column_axis: "Axis | None" = None     # Paraver's control minimum, maximum and delta (None: partner rows)
    plane_axis: "Axis | None" = None      # 3D: the extra control's
    partners: bool = False                # communication statistics: a column per partner row
    present: np.ndarray | None = None     # the cells Paraver has (a burst or message counted), as `table`


@dataclass
class Axis:
    """Paraver's ColumnTranslator: `count` columns of width `delta` from `minimum`; a value in
    [minimum, maximum] falls in column floor((value - minimum) / delta), the last one at most."""
    minimum: float
    maximum: float
    delta: float
    count: int

    @classmethod
    def fixed(cls, minimum: float, maximum: float, delta: float) -> "Axis":
        """ColumnTranslator(min, max, delta): ceil((max - min) / delta) columns, one more when
        delta is 1 and max starts a column, at least one."""
        count = int(np.ceil((maximum - minimum) / delta)) if delta else 1
        if delta == 1 and count * delta + minimum <= maximum:
            count += 1
        return cls(float(minimum), float(maximum), float(delta), max(count, 1))

    @classmethod
    def spread(cls, minimum: float, maximum: float, count: int) -> "Axis":
        """ColumnTranslator(min, max, numColumns): delta = (max - min) / count."""
        return cls(float(minimum), float(maximum), (maximum - minimum) / count, count)

    def lower(self) -> np.ndarray:
        """Each column's lower bound, column x delta + minimum as Paraver computes it."""
        return np.arange(self.count) * self.delta + self.minimum

    def index(self, values: np.ndarray) -> np.ndarray:
        """Each value's column (ColumnTranslator::getColumn), -1 outside [minimum, maximum]."""
        with np.errstate(invalid="ignore", divide="ignore"):
            column = np.minimum(np.floor((values - self.minimum) / self.delta), self.count - 1)
        column = np.where((values < self.minimum) | (values > self.maximum), -1, column)
        return column.astype(np.int64)


def evaluate_histogram(view: CfgView, histogram: Histogram, trace: TraceColumns) -> HistogramTable:
    """Control-window values binned into columns (and the 3D control window's into planes), the
    statistic of the data window, on the union of the windows' boundaries."""
    if histogram.statistic in COMM_STATISTICS:
        return _communications(view, histogram, trace)
    if histogram.statistic not in STATISTICS:
        raise NotEvaluated(f"histogram {histogram.name!r}: statistic {histogram.statistic!r}")
    if histogram.limits not in (None, "Alltrace", "Allwindow"):
        raise NotEvaluated(f"histogram {histogram.name!r}: analysis limits {histogram.limits!r}")
    positions = [histogram.columns.window, histogram.data_window]
    if histogram.is_3d:
        positions.append(histogram.planes.window)
    evaluated = {p: evaluate_window(view, p, trace) for p in dict.fromkeys(positions)}
    if len(evaluated) == 1:
        only = next(iter(evaluated.values()))
        row, begin, end, values = only.row, only.begin, only.end, [only.value]
    else:
        row, begin, end, values = _align(list(evaluated.values()))
    t0, t1 = 0, max(trace.t_end, 1)
    if histogram.limits == "Allwindow":                 # the control window's time window
        from .export import initial_window
        t0, t1 = initial_window(view.window(histogram.columns.window), trace.t_end) or (t0, t1)
        begin, end = np.maximum(begin, t0), np.minimum(end, t1)
        inside = end > begin
        row, begin, end, values = row[inside], begin[inside], end[inside], [v[inside] for v in values]
    by_window = dict(zip(evaluated, values))
    control, data = by_window[histogram.columns.window], by_window[histogram.data_window]
    n_rows = next(iter(evaluated.values())).n_rows
    axis = _axis(histogram, histogram.columns, view.window(histogram.columns.window),
                 scale_values(evaluated[histogram.columns.window], t0, t1, end_value(view, histogram.columns.window)))
    lower, column = axis.lower(), axis.index(control)
    plane_axis = None
    if histogram.is_3d:
        plane_axis = _axis(histogram, histogram.planes, view.window(histogram.planes.window),
                           scale_values(evaluated[histogram.planes.window], t0, t1,
                                        end_value(view, histogram.planes.window)), planes=True)
        plane_lower, plane = plane_axis.lower(), plane_axis.index(by_window[histogram.planes.window])
    else:
        plane_lower, plane = np.zeros(1), np.zeros(len(column), np.int64)
    keep = (column >= 0) & (plane >= 0)
    keep &= _within(histogram, data, end - begin)
    duration = (end - begin).astype(np.float64)
    shape = (len(plane_lower), n_rows, len(lower))
    flat = (plane[keep] * n_rows + row[keep].astype(np.int64)) * len(lower) + column[keep]

    def cells(weight):
        return np.bincount(flat, weights=weight[keep], minlength=int(np.prod(shape))).reshape(shape)

    def ratio(a, b):
        return np.divide(a, b, out=np.zeros(shape), where=b > 0)

    statistic = histogram.statistic
    count = cells(np.ones(len(data)))
    if statistic == "Time":
        table = cells(duration)
    elif statistic == "Sum bursts":
        table = cells(data)
    elif statistic == "# Bursts":
        table = count
    elif statistic == "# Bursts != 0":
        table = cells((data != 0).astype(np.float64))
    elif statistic == "% # Bursts":                     # of the row's bursts in the plane
        table = ratio(count * 100.0, count.sum(axis=2, keepdims=True))
    elif statistic == "Integral":                       # duration x |value| (StatIntegral), ns here
        table = cells(duration * np.abs(data))
    elif statistic == "Average value":                  # time-weighted mean of the data values
        table = ratio(cells(duration * data), cells(duration))
    elif statistic == "Average per Burst":
        table = ratio(cells(data), count)
    elif statistic == "Average Burst Time":             # ns here, the control window's units in paramedir
        table = ratio(cells(duration), count)
    elif statistic in ("Maximum", "Minimum"):
        table = np.full(int(np.prod(shape)), -np.inf if statistic == "Maximum" else np.inf)
        (np.maximum if statistic == "Maximum" else np.minimum).at(table, flat, data[keep])
        table = np.where(count.ravel() > 0, table, 0.0).reshape(shape)
    elif statistic == "% Window Time":                  # of the analysed time (the whole trace)
        table = cells(duration) * 100.0 / (t1 - t0)
    else:                                               # % Time: of the row's counted time
        time = cells(duration)
        table = ratio(time * 100.0, time.sum(axis=2, keepdims=True))
    if not histogram.is_3d:
        return HistogramTable(lower, table[0], statistic, column_axis=axis, present=count[0] > 0)
    return HistogramTable(lower, table, statistic, plane_lower, count.sum(axis=(1, 2)) > 0, column_axis=axis,
                          plane_axis=plane_axis, present=count > 0)


# Communication statistics: (row is the sender, weighted by the size)
COMM_STATISTICS = {"#Sends": (True, False), "#Receives": (False, False), "Bytes sent": (True, True),
                   "Bytes received": (False, True)}


def _communications(view: CfgView, histogram: Histogram, trace: TraceColumns) -> HistogramTable:
    """A communication statistic as KHistogram computes it: per row, the row's send (or
    receive) records of the analysed time, in the column of the partner thread; counted, or
    their sizes added (histogramstatistic.cpp's StatNumSends ... StatBytesReceived)."""
    name = f"histogram {histogram.name!r}"
    if histogram.is_3d:
        raise NotEvaluated(f"{name}: communication statistic {histogram.statistic!r} in 3D planes")
    control = view.window(histogram.columns.window)
    if control.level != "thread" and not (control.level == "task" and _one_thread_each(trace)):
        raise NotEvaluated(f"{name}: communications between {control.level} rows")
    if histogram.limits not in (None, "Alltrace"):
        raise NotEvaluated(f"{name}: analysis limits {histogram.limits!r}")
    if trace.messages is None:
        trace.messages = no_messages()
    if control.derived:
        raise NotEvaluated(f"{name}: communications of a derived control window")
    if control.filters.logical is not False and control.filters.physical is True:
        raise NotEvaluated(f"{name}: communications both logically and physically filtered")
    sending, sized = COMM_STATISTICS[histogram.statistic]
    m = trace.messages
    row, partner = (m["send_loc"], m["recv_loc"]) if sending else (m["recv_loc"], m["send_loc"])
    row, partner = row.astype(np.int64), partner.astype(np.int64)
    keep = (row < trace.n_rows) & (partner < trace.n_rows) & (row >= 0) & (partner >= 0)
    try:        # the records the control window's filter lets into its record list: each message once a side
        keep &= comms.message_mask(control, trace)
    except comms.FilterError as exc:
        raise NotEvaluated(f"{name}: {exc}") from None
    if control.filters.logical is False and control.filters.physical is not True:
        keep[:] = False                                  # neither logical nor physical: no record passes
    weight = m["size"].astype(np.float64) if sized else np.ones(len(row))
    cell = row[keep] * trace.n_rows + partner[keep]
    table = np.bincount(cell, weights=weight[keep], minlength=trace.n_rows * trace.n_rows).reshape(trace.n_rows, -1)
    present = np.bincount(cell, minlength=trace.n_rows * trace.n_rows).reshape(trace.n_rows, -1) > 0
    return HistogramTable(np.arange(trace.n_rows, dtype=np.float64), table, histogram.statistic, partners=True,
                          present=present)


def _one_thread_each(trace: TraceColumns) -> bool:
    try:
        tasks = trace.levels().thread_task
    except LevelError:
        return False
    return len(np.unique(tasks)) == len(tasks)


# The statistics evaluated, as Paraver's histogramstatistic.cpp computes them; Time, Average
# Burst Time and Integral are in ns (trace units) here, in the window's units in paramedir's table.
STATISTICS = ("Time", "Sum bursts", "# Bursts", "# Bursts != 0", "% # Bursts", "Integral", "Average value",
              "Average per Burst", "Average Burst Time", "Maximum", "Minimum", "% Window Time", "% Time")
TIME_STATISTICS = ("Time", "Average Burst Time")
PERCENT_STATISTICS = ("% Time", "% # Bursts", "% Window Time")
COMPUTED_COLUMNS = 200        # ParaverConfig's histogram columns when a computed scale is not whole values


def code_coloured(window: Window) -> bool:
    """Paraver's isCodeColorSet: the window's colour mode is code colours (the loader's default)."""
    return window.color_mode in (None, "window_in_code_mode")


def scale_values(timeline: Timeline, t0: int, t1: int, after_end: float = 0.0) -> np.ndarray:
    """The values Paraver's computeYScale reads to compute a histogram's range: each row's
    intervals from the one holding the histogram's begin time up to the first one that begins at
    or after its end time (TimelineProxy::computeYScale calls calcNext while the current interval
    begins before the end: the interval after the end is read too); a row with no interval
    beginning at or after the end reads the one past the trace's end, `after_end`
    (`end_value`: parami's mapping.cfg, Executing CPU + 1, has a column 1 from it)."""
    seen = (timeline.end > t0) & (timeline.begin < t1)
    after = timeline.begin >= t1
    rows_after = timeline.row[after]
    if after.any():                         # each row's first interval beginning at or after t1
        first = np.r_[True, rows_after[1:] != rows_after[:-1]]
        seen[np.flatnonzero(after)[first]] = True
    past_end = np.setdiff1d(np.arange(timeline.n_rows), rows_after).size > 0
    return np.r_[timeline.value[seen], [after_end] if past_end else []]


def end_value(view: CfgView, position: int) -> float:
    """A window's value past the trace's end: the functions' 0 through the window's compose
    functions (a derived window: its operation on its parents' values there)."""
    window = view.window(position)
    value = np.zeros(1)
    if window.derived:
        d = window.derivation
        left, right = (np.array([end_value(view, parent)]) for parent in d.parents)
        value = _OPERATIONS[d.operation](left * d.factors[0], right * d.factors[1]) \
            if d.operation in _OPERATIONS else value
    return float(compose_values(window, value)[0])


def compose_values(window: Window, value: np.ndarray) -> np.ndarray:
    """Values of a thread-level (or one-thread task) window's function, or of a derived window's
    operation, through its compose functions in the kernel's order (evaluate_window's): each
    level's compose, topcompose2, topcompose1."""
    slots = [COMPOSE_SLOT[window.level], "topcompose2", "topcompose1"] if window.derived else _single_slots(window)
    for slot in slots:
        function = window.compose.get(slot)
        if function is not None and function.name in COMPOSE_FUNCTIONS:
            value = COMPOSE_FUNCTIONS[function.name](value, function.params)
    return value


def _axis(histogram: Histogram, b, window: Window, scale: np.ndarray, planes: bool = False) -> Axis:
    """Columns (or planes) as Paraver makes them. The cfg's minimum, maximum and delta; or, when
    the scale is computed (HistogramProxy::compute2DScale / compute3DScale), from the control
    window's values `scale` (computeYScale: the smallest non-zero value, the largest one and
    0): columns up to the largest value plus 5 % (planes: up to the largest), one per whole
    value from the smallest (delta 1) when they are all one value or the window is code
    coloured (columns: and spans at most 10,000, the top rounded down), else COMPUTED_COLUMNS
    columns (planes: delta (max - min) / COMPUTED_COLUMNS)."""
    if b.computed:
        nonzero = scale[scale != 0]
        low = float(nonzero.min()) if len(nonzero) else 0.0
        high = max(0.0, float(scale.max())) if len(scale) else 0.0
        span = high - low
        if planes:
            delta = 1.0 if span == 0 or code_coloured(window) else span / COMPUTED_COLUMNS
            axis = Axis.fixed(low, high, delta)
        elif span == 0:
            axis = Axis.fixed(low, high, 1.0)
        elif code_coloured(window) and span <= 10_000:
            axis = Axis.fixed(low, float(np.floor(high + span * 0.05)), 1.0)
        else:
            axis = Axis.spread(low, high + span * 0.05, COMPUTED_COLUMNS)
    else:
        what = "planes" if planes else "columns"
        if b.minimum is None or b.maximum is None or not b.delta:
            raise NotEvaluated(f"histogram {histogram.name!r}: {what} without minimum, maximum and delta")
        axis = Axis.fixed(b.minimum, b.maximum, b.delta)
    if axis.count > 100_000:
        raise NotEvaluated(f"histogram {histogram.name!r}: {axis.count} {'planes' if planes else 'columns'}")
    return axis


def _within(histogram: Histogram, values: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Analyzer2D.Parameters: data range and burst-duration range, inclusive."""
    keep = np.ones(len(values), bool)
    if histogram.data_range is not None:
        keep &= (values >= histogram.data_range[0]) & (values <= histogram.data_range[1])
    if histogram.burst_range is not None:
        keep &= (durations >= histogram.burst_range[0]) & (durations <= histogram.burst_range[1])
    return keep
