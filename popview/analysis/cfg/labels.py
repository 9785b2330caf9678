"""What Paraver calls a window's value: LabelConstructor::semanticLabel, by the window's
SemanticInfoType, as paramedir labels a histogram's whole-value columns and planes. No Qt.

A window's info type is its last function in Paraver's order that does not keep the type of
what it composes (KSingleWindow / KDerivedWindow::getSemanticInfoType): topcompose1,
topcompose2, the compose and function of the window's level (task), compose_thread, then the
thread function; a derived window's operation keeps the type, so it is its first parent's. A
function that names no type gives plain numbers (NO_TYPE). Event values are named from the
.pcf through the window's event-type filter (a derived window: its first parent's), the
first type present in the trace that names the value (the types in ascending order).
"""
from __future__ import annotations

import numpy as np

from .model import CfgView, Window

SAME = "same"
NO = "no"

# semanticcomposefunctions.h: the compose functions that keep (or set) the type
COMPOSE_TYPES = {
    "As Is": SAME, "Abs": SAME, "Ceil": SAME, "Floor": SAME, "Round": SAME, "Is Equal": SAME,
    "Select Range": SAME, "Select Range [)": SAME, "Stacked Val": SAME, "Join Bursts": SAME,
    "Timer": SAME, "Translate": SAME, "Burst Time": "time", "Begin Time": "time", "End Time": "time",
}
# semanticthreadfunctions.h
THREAD_TYPES = {
    "State As Is": "state", "Useful": "state", "Given State": "state", "State Record Dur.": "time",
    "Last Evt Type": "event type", "Next Evt Type": "event type",
    "Last Evt Val": "event value", "Next Evt Val": "event value", "Last Evt Val w/o Bursts": "event value",
    "Given Evt Val": "event value", "Int. Between Evt": "time",
    "Event Bytes": "size", "Event Sent Bytes": "size", "Comm Size": "size", "Last Send Size": "size",
    "Send Bytes in Transit": "size", "Recv Bytes in Transit": "size", "Recv Negative Bytes": "size",
    "Number Of Send Bytes": "size", "Number Of Receive Bytes": "size",
    "Last Tag": "tag", "Send BandWidth": "bandwidth", "Recv BandWidth": "bandwidth",
    "Last Send Dur.": "time", "Next Recv Dur.": "time",
    "Comm Partner": "object", "Comm Recv. Partner": "object",
    "Application ID": "appl", "TaskID": "task", "Thread ID": "thread", "Node ID": "node", "Cpu ID": "cpu",
}
# semanticnotthreadfunctions.h: the task (appl, workload) functions that keep the type
TASK_TYPES = {"Maximum": SAME, "Minimum": SAME, "Thread i": SAME, "Changed value": SAME, "Mode": SAME,
              "Active Thd": SAME, "Active Thd Val": SAME}         # and semanticcpufunctions.h's
# semanticderived.h: every derived operation keeps the type but these two
DERIVED_TYPES = {"controlled: enumerate": NO, "controlled: average": NO}
# The time unit's suffix of a bandwidth (LabelConstructor::semanticLabel)
BANDWIDTH_UNITS = {"Nanoseconds": "GB/sec", "Microseconds": "MB/sec", "Milliseconds": "KB/sec",
                   "Seconds": "bytes/sec", "Minutes": "bytes/min", "Hours": "bytes/hour", "Days": "bytes/day"}


def info_type(view: CfgView | None, window: Window) -> str:
    """Paraver's SemanticInfoType of `window` (NO_TYPE "no", "state", "event value", ...)."""
    for slot in ("topcompose1", "topcompose2"):
        found = _compose_type(window, slot)
        if found != SAME:
            return found
    order = ("system", "node", "cpu") if window.level in ("system", "node", "cpu") else ("workload", "appl", "task")
    if window.level in order:                               # the levels between the window's and thread
        for level in order[order.index(window.level):]:
            found = _compose_type(window, f"compose_{level}")
            if found != SAME:
                return found
            function = window.functions.get(level)
            if not window.derived and function is not None and TASK_TYPES.get(function.name, NO) != SAME:
                return NO
    found = _compose_type(window, "compose_thread")
    if found != SAME:
        return found
    if window.derived:
        found = DERIVED_TYPES.get(window.derivation.operation, SAME)
        if found != SAME or view is None:
            return NO if found == SAME else found
        return info_type(view, view.window(window.derivation.parents[0]))
    function = window.functions.get("thread")
    return THREAD_TYPES.get(function.name, NO) if function is not None else NO


def _compose_type(window: Window, slot: str) -> str:
    function = window.compose.get(slot)
    return SAME if function is None else COMPOSE_TYPES.get(function.name, NO)


def filter_window(view: CfgView | None, window: Window) -> Window:
    """The window whose event filter names its values: a derived window's first parent's (TimelineProxy::getFilter)."""
    while window.derived and view is not None:
        window = view.window(window.derivation.parents[0])
    return window


def _valid_types(window: Window, present: np.ndarray) -> list[int]:
    """KFilter::getValidEvents: the trace's event types the window's type filter lets through, ascending."""
    from .evaluate import NotEvaluated, _selected_types
    present = np.unique(np.asarray(present, np.int64))
    try:
        return [int(t) for t in present[_selected_types(window.filters.criteria.get("evt_type"), present, "")]]
    except NotEvaluated:
        return []


class Namer:
    """Names the whole values of one window as LabelConstructor::semanticLabel does (precision 0,
    thousands grouped)."""

    def __init__(self, view: CfgView | None, window: Window, definitions, present_types=None):
        self.kind = info_type(view, window) if definitions is not None else NO
        self.window, self.definitions = window, definitions
        self.types: list[int] = []
        if self.kind == "event value":
            present = present_types() if callable(present_types) else present_types
            self.types = _valid_types(filter_window(view, window), np.zeros(0) if present is None else present)

    def __call__(self, value: float) -> str:
        number = f"{value:,.0f}"
        d, kind = self.definitions, self.kind
        if kind == "state":
            info = d.states.get(int(value))
            name = info.get("name") if isinstance(info, dict) else None
            return str(name) if name else f"Unknown state {number}"
        if kind == "event value":
            types = self.types or sorted(d.event_types)       # no valid type: any type that names it
            for code in types:
                event_type = d.event_types.get(code)
                if event_type is not None and int(value) in event_type.values:
                    return str(event_type.values[int(value)])
            return f"value {number}"
        if kind == "event type":
            event_type = d.event_types.get(int(value))
            return event_type.name if event_type is not None and event_type.name else f"type {number}"
        if kind == "size":
            return f"{number} bytes"
        if kind == "bandwidth":
            unit = BANDWIDTH_UNITS.get(self.window.units or "Microseconds")
            return f"{number} {unit}" if unit else number
        return number

    def short(self, value: float) -> str:
        """The column label with ShortHeaderLabels (Paraver's default): an event value's name
        without its first '[' ... last ']' (LabelConstructor::transformToShort)."""
        text = self(value)
        if self.kind == "event value":
            begin, end = text.find("["), text.rfind("]")
            if begin != -1 and end != -1:           # std::string::erase(begin, end - begin + 1)
                text = text[:begin] + (text[end + 1:] if end >= begin else "")
        return text
