"""Which Paraver semantic functions exist, which popview's engine is specified for, and
per window or histogram the precise reasons why it is not (yet) evaluated by popview.

A window is *described fully* when every function, operation and filter it uses has a
popview meaning in the engine set below; otherwise each gap is named, never guessed.
"""
from __future__ import annotations

from .model import CfgView, Histogram, Window

# Every name the Paraver kernel's function factory knows (plus "Changed value", "AddingSign",
# the newer derived operations), grouped as the kernel groups them.
KERNEL_FUNCTIONS = frozenset((
    # compose
    "As Is", "Sign", "1-Sign", "Mod", "Mod+1", "Div", "Prod", "Add", "Subs", "Select Range", "Is In Range",
    "Is Equal", "Is Equal (Sign)", "Stacked Val", "In Stacked Val", "Nesting level", "Delta", "Burst Time",
    "Join Bursts",
    # cpu
    "Active Thd", "Active Thd Sign", "Active Thd Val", "Active Thd Val Sign",
    # not-thread levels
    "Adding", "AddingSign", "Average", "Maximum", "Minimum", "Activity", "In Activity", "Mode", "Thread i",
    "Add Tasks", "Changed value",
    # thread: states
    "State As Is", "Useful", "State Sign", "Given State", "In State", "Not In State", "State Record Dur.",
    # thread: events
    "Last Evt Type", "Last Evt Val", "Last Evt Val w/o Bursts", "Next Evt Type", "Next Evt Val",
    "Avg Next Evt Val", "Avg Last Evt Val", "Given Evt Val", "In Evt Val", "Int. Between Evt",
    "Not In Evt Val", "In Evt Range", "Event Bytes", "Event Sent Bytes",
    # thread: communications
    "Last Tag", "Comm Size", "Comm Recv. Partner", "Comm Partner", "Last Send Dur.", "Next Recv Dur.",
    "Send Bytes in Transit", "Send Messages in Transit", "Send BandWidth", "Recv Bytes in Transit",
    "Recv Messages in Transit", "Recv BandWidth", "Recv Negative Messages", "Recv Negative Bytes",
    "Number Of Receives", "Number Of Receive Bytes", "Number Of Sends", "Number Of Send Bytes", "Last Send Size",
    # thread: objects
    "Application ID", "Task ID", "TaskID", "Thread ID", "Node ID", "Cpu ID", "In Appl ID", "In Task ID",
    "In Thread ID", "In Node ID", "In Cpu ID",
))

# The functions popview's semantic engine is specified to evaluate (the ones the collected
# cfgs use most); anything else is named as not evaluated yet.
ENGINE_FUNCTIONS = frozenset((
    "As Is", "Adding", "Active Thd", "Last Evt Val", "Next Evt Val", "Avg Last Evt Val", "Avg Next Evt Val",
    "Thread i", "Sign", "1-Sign", "Useful", "State As Is", "Stacked Val", "Int. Between Evt", "In Activity",
    "Select Range", "Is Equal", "Is Equal (Sign)", "Recv BandWidth", "Prod", "Div", "Add", "Subs", "Mod",
    "Mod+1", "Is In Range", "State Record Dur.", "Given State", "Average", "Maximum", "Minimum",
    "Send BandWidth", "Send Bytes in Transit", "Send Messages in Transit", "Recv Bytes in Transit",
    "Recv Messages in Transit", "Recv Negative Messages", "Recv Negative Bytes", "Event Bytes", "Event Sent Bytes",
    "Number Of Sends", "Number Of Send Bytes", "Number Of Receives", "Number Of Receive Bytes", "Comm Partner",
    "Comm Recv. Partner", "Last Tag", "Comm Size", "Last Send Dur.", "Next Recv Dur.", "Last Send Size",
    "Nesting level", "Join Bursts", "Burst Time", "Delta", "In Evt Range", "In Evt Val", "Not In Evt Val",
    "Given Evt Val", "Node ID",
    "AddingSign", "Activity", "Mode", "Add Tasks", "Changed value", "Active Thd Sign", "Active Thd Val",
    "Active Thd Val Sign", "In Evt Range", "Application ID", "TaskID", "Thread ID", "Node ID", "Cpu ID",
))
ENGINE_OPERATIONS = frozenset(("add", "product", "substract", "divide", "maximum", "minimum",
                               "controlled: clear by", "controlled: maximum"))
ENGINE_LEVELS = frozenset(("thread", "task", "appl", "workload", "cpu", "node", "system"))
ENGINE_STATISTICS = frozenset((
    "Time", "% Time", "# Bursts", "% # Bursts", "# Bursts != 0", "Average value", "Maximum", "Minimum",
    "Sum bursts", "Average Burst Time", "Integral", "% Window Time", "Average per Burst",
    "#Sends", "#Receives", "Bytes sent", "Bytes received",
))
ENGINE_EVENT_FILTERS = frozenset(("All", "None", "=", "!=", "[x,y]", "<", ">"))

# Levels whose function a window of a given level actually uses.
_LEVELS_BELOW = {"workload": ("workload", "appl", "task", "thread"), "appl": ("appl", "task", "thread"),
                 "task": ("task", "thread"), "thread": ("thread",),
                 "system": ("system", "node", "cpu"), "node": ("node", "cpu"), "cpu": ("cpu",)}
_COMPOSE_OF = {level: f"compose_{level}" for level in _LEVELS_BELOW}


def used_slots(window: Window) -> tuple[list[str], list[str]]:
    """The function levels and compose slots that shape this window's values.

    A single window reduces threads up to its level; a derived window combines its
    parents' values at its own level, so only that level's function and compose apply.
    """
    levels = [window.level] if window.derived else list(_LEVELS_BELOW.get(window.level, ()))
    if window.derived:
        levels = [level for level in levels if level in window.functions]
    composes = [_COMPOSE_OF[level] for level in levels] + ["topcompose1", "topcompose2"]
    return levels, composes


def _function_gap(where: str, name: str) -> str | None:
    if name not in KERNEL_FUNCTIONS:
        return f"unknown function {name!r} ({where})"
    if name not in ENGINE_FUNCTIONS:
        return f"{name!r} ({where}) is not in popview's engine set"
    return None


def window_gaps(view: CfgView, window: Window) -> list[str]:
    """Why popview does not evaluate this window; empty when it is described fully."""
    gaps: list[str] = []
    if window.level not in ENGINE_LEVELS:
        gaps.append(f"rows at {window.level} level (resource model) are not in popview's engine set")
    levels, composes = used_slots(window)
    for level in levels:
        function = window.functions.get(level)
        if function is None:
            if not window.derived:
                gaps.append(f"no function stated at {level} level")
            continue
        gaps.append(_function_gap(f"{level} level", function.name))
    for slot in composes:
        function = window.compose.get(slot)
        if function is not None:
            gaps.append(_function_gap(slot, function.name))
    if window.derived:
        gaps.extend(_derivation_gaps(view, window))
    else:
        gaps.extend(_filter_gaps(window))
    return [gap for gap in gaps if gap]


def _derivation_gaps(view: CfgView, window: Window) -> list[str]:
    derivation = window.derivation
    gaps = []
    if derivation.operation not in ENGINE_OPERATIONS:
        gaps.append(f"derived operation {derivation.operation!r} is not in popview's engine set")
    if any(derivation.shifts):
        gaps.append(f"interval shifts {derivation.shifts[0]} {derivation.shifts[1]} are not evaluated")
    for parent in derivation.parents:
        if window_gaps(view, view.window(parent)):
            gaps.append(f"parent window {parent} is not evaluated")
    return gaps


COMMUNICATION_FUNCTIONS = frozenset((
    "Last Tag", "Comm Size", "Comm Recv. Partner", "Comm Partner", "Last Send Dur.", "Next Recv Dur.",
    "Send Bytes in Transit", "Send Messages in Transit", "Send BandWidth", "Recv Bytes in Transit",
    "Recv Messages in Transit", "Recv BandWidth", "Recv Negative Messages", "Recv Negative Bytes",
    "Number Of Receives", "Number Of Receive Bytes", "Number Of Sends", "Number Of Send Bytes", "Last Send Size",
    "Event Bytes", "Event Sent Bytes",
))


def _filter_gaps(window: Window) -> list[str]:
    """Event filters popview evaluates; communication filters matter only to communication functions."""
    gaps = []
    thread = window.functions.get("thread")
    reads_communications = thread is not None and thread.name in COMMUNICATION_FUNCTIONS
    for key, criterion in window.filters.criteria.items():
        if key in ("evt_type", "evt_value"):
            if criterion.function not in ENGINE_EVENT_FILTERS:
                gaps.append(f"event filter {key} {criterion.function!r} is not evaluated")
        elif reads_communications and criterion.function not in ENGINE_EVENT_FILTERS:
            gaps.append(f"communication filter {key} {criterion.function!r} is not evaluated")
    return gaps


def histogram_gaps(view: CfgView, histogram: Histogram) -> list[str]:
    """Why popview does not evaluate this histogram; empty when it is described fully."""
    gaps = []
    if histogram.statistic not in ENGINE_STATISTICS:
        gaps.append(f"statistic {histogram.statistic!r} (communications) is not in popview's engine set"
                    if histogram.statistic in ("Bytes sent", "#Sends", "#Receives", "Bytes received")
                    else f"statistic {histogram.statistic!r} is not in popview's engine set")
    refs = {"control": histogram.columns.window, "data": histogram.data_window}
    if histogram.planes is not None:
        refs["3D control"] = histogram.planes.window
    for role, ref in refs.items():
        if window_gaps(view, view.window(ref)):
            gaps.append(f"{role} window {ref} is not evaluated")
    if histogram.limits not in (None, "Alltrace", "Allwindow"):
        gaps.append(f"analysis limits {histogram.limits!r} are not evaluated")
    return list(dict.fromkeys(gaps))
