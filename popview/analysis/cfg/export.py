"""A popview timeline view as a Paraver cfg: the colour mode's semantic as Paraver windows,
the time window, the colours and the gradient's range. No Qt.

Each colour mode becomes what a Paraver analyst would build for it (the windows written as
Paraver 4.x writes them: all seven level functions, the seven filter functions, the nine
compose slots, version 3.4 header; `writer.write_cfg`):

- State: `State As Is`, code colours (Paraver colours states from the .pcf);
- MPI call / OpenMP construct: `Last Evt Val` of the trace's event types of that paradigm;
- Useful duration: `State Record Dur.` of Running, in nanoseconds, gradient;
- IPC: Instructions and Cycles (`Next Evt Val` of PAPI_TOT_INS / PAPI_TOT_CYC, hidden) and
  their quotient (derived `divide`), gradient over the view's range;
- a counter rate: `Avg Next Evt Val` of the counter with factor 1e9 (per second), gradient;
- an event type: `Last Evt Val` of the type, code colours or gradient as popview draws it.

Call-path modes have no Paraver window (Paraver has no call-path tree): refused with the reason.
"""
from __future__ import annotations

from popview.analysis.timeline_data import ColourMode

from .evaluate import _sorted_unique
from .model import Binning, CfgView, Criterion, Derivation, Function, Histogram, Window

SINGLE_FUNCTIONS = (("cpu", "Active Thd"), ("appl", "Adding"), ("task", "Adding"), ("node", "Adding"),
                    ("system", "Adding"), ("workload", "Adding"))
DERIVED_FUNCTIONS = (("appl", "Adding"), ("task", "Adding"), ("node", "Adding"), ("system", "Adding"),
                     ("workload", "Adding"))
FILTERS = ("from_obj", "to_obj", "tag_msg", "size_msg", "bw_msg", "evt_type", "evt_value")
COMPOSE = ("compose_cpu", "compose_appl", "compose_task", "compose_thread", "compose_node", "compose_system",
           "compose_workload", "topcompose1", "topcompose2")
CODE, GRADIENT, NULL_GRADIENT = "window_in_code_mode", "window_in_gradient_mode", "window_in_null_gradient_mode"


class NotExportable(ValueError):
    """The view has no Paraver cfg equivalent (the message says why)."""


def _window(name: str, position: int, thread: Function | None = None, evt_types: tuple[int, ...] = (),
            evt_function: str = "=", labels: tuple[str, ...] = (), derivation: Derivation | None = None,
            shown: bool = True) -> Window:
    window = Window(name, position, units="Nanoseconds", derivation=derivation)
    levels = DERIVED_FUNCTIONS if derivation else SINGLE_FUNCTIONS
    window.functions = {level: Function(fn) for level, fn in levels}
    if thread is not None:
        window.functions["thread"] = thread
    window.compose = {slot: Function("As Is") for slot in COMPOSE}
    if derivation is None:
        for key in FILTERS:
            window.filters.criteria[key] = Criterion("All")
        if evt_types:
            window.filters.criteria["evt_type"] = Criterion(evt_function, tuple(int(t) for t in evt_types), labels)
        window.filters.logical, window.filters.physical = True, False
        window.filters.fromto_and = window.filters.tagsize_and = window.filters.typeval_and = True
        window.objects = [("appl", "{ 1, { All } }")]
    window.drawmode = window.drawmode_rows = "draw_maximum"
    window.gui = {"window_open": "true" if shown else "false", "window_compute_y_max": "false"}
    return window


def _type_labels(definitions, codes) -> tuple[str, ...]:
    names = [definitions.event_types[c].name if c in definitions.event_types else "" for c in codes]
    return tuple(names) if all(names) else ()


def present_event_types(reader) -> set[int]:
    """The event types that have records in a trace's cache (what Paraver's loader checks a
    cfg's event filters against)."""
    if not reader.has("events"):
        return set()
    return {int(t) for t in _sorted_unique(reader.read("events", columns=["type"])["type"])}


def timeline_cfg(definitions, mode: ColourMode, t0: int, t1: int, low: float | None = None,
                 high: float | None = None, title: str = "", present: set[int] | None = None) -> CfgView:
    """The cfg of a timeline showing `mode` on [t0, t1) of a trace with `definitions`;
    `low` / `high`: the gradient's range (the view's), for the gradient modes. `present`: the
    event types with records in the trace (`present_event_types`); when given, windows filter
    only on those, and a mode whose event type has no record is refused, since Paraver refuses
    a cfg none of whose filtered events is in the trace (.pcf types that never occur)."""
    t_end = max(int(definitions.t_end), 1)
    kind = mode.kind
    if present is not None and kind in ("ipc", "counter", "event"):
        wanted = [definitions.counter_code(n) for n in ("PAPI_TOT_INS", "PAPI_TOT_CYC")] if kind == "ipc" \
            else [mode.param]
        absent = [c for c in wanted if c is not None and c not in present]
        if absent:
            raise NotExportable(f"{mode.label or kind}: event type {absent[0]} ({_type_name(definitions, absent[0])}) "
                                "has no record in the trace: Paraver refuses a cfg whose event filter matches "
                                "nothing in the trace")
    windows: list[Window]
    if kind == "state":
        windows = [_window("State", 1, Function("State As Is"))]
        windows[0].color_mode = CODE
    elif kind in ("mpi", "openmp"):
        codes = sorted(c for c, et in definitions.event_types.items() if et.paradigm == kind and et.kind == "region"
                       and (present is None or c in present))
        if not codes:
            raise NotExportable(f"the trace has no {kind.upper()} event type for a Paraver window to filter on")
        name = "MPI call" if kind == "mpi" else "OpenMP construct"
        windows = [_window(name, 1, Function("Last Evt Val"), tuple(codes), labels=_type_labels(definitions, codes))]
        windows[0].color_mode = CODE
    elif kind == "useful":
        windows = [_window("Useful Duration", 1, Function("State Record Dur.", ((1.0,),)))]
        windows[0].color_mode = NULL_GRADIENT
    elif kind == "ipc":
        codes = [definitions.counter_code(n) for n in ("PAPI_TOT_INS", "PAPI_TOT_CYC")]
        if any(c is None for c in codes):
            raise NotExportable("IPC needs the PAPI_TOT_INS and PAPI_TOT_CYC event types")
        windows = [_window("Instructions", 1, Function("Next Evt Val"), (codes[0],),
                           labels=_type_labels(definitions, codes[:1]), shown=False),
                   _window("Cycles", 2, Function("Next Evt Val"), (codes[1],),
                           labels=_type_labels(definitions, codes[1:]), shown=False),
                   _window("IPC", 3, derivation=Derivation("divide", (1, 2)))]
        windows[-1].color_mode = NULL_GRADIENT
    elif kind == "counter":
        windows = [_window(f"{_type_name(definitions, mode.param)} rate", 1, Function("Avg Next Evt Val", ((1e9,),)),
                           (mode.param,), labels=_type_labels(definitions, [mode.param]))]
        windows[0].color_mode = NULL_GRADIENT
    elif kind == "event":
        windows = [_window(_type_name(definitions, mode.param), 1, Function("Last Evt Val"), (mode.param,),
                           labels=_type_labels(definitions, [mode.param]))]
        windows[0].color_mode = CODE if mode.categorical else NULL_GRADIENT
    else:
        raise NotExportable(f"{mode.label or kind}: Paraver has no window for popview's call-path colours "
                            "(Paraver traces carry callers as events, not a call-path tree)")
    shown = windows[-1]
    if shown.color_mode != CODE:
        if low is None or high is None or not high > low:
            raise NotExportable(f"{mode.label or kind}: the gradient needs a range (low < high)")
        shown.minimum_y, shown.maximum_y = float(low), float(high)
        shown.gradient_function = "gradient_function_linear"
    for window in windows:                    # every window at the view's time window, as Paraver saves them
        window.begin_relative, window.end_relative = int(t0) / t_end, int(t1) / t_end
        window.begin_time, window.end_time = float(int(t0)), float(min(int(t1), t_end))
    description = title or f"popview timeline: {mode.label or kind}"
    return CfgView("popview", "3.4", "new", description=description, windows=windows)


# popview's Histograms pane statistics as Paraver statistics (histogramstatistic.cpp)
TABLE_STATISTICS = {"time": "Time", "% time": "% Window Time", "bursts": "# Bursts", "count": "# Bursts",
                    "average burst": "Average Burst Time", "average duration": "Average Burst Time"}
DBL_MAX = 1.7976931348623157e308


def histogram_cfg(definitions, table, stat: str, present: set[int] | None = None, title: str = "") -> CfgView:
    """The cfg of a Histograms pane table (popview.analysis.histograms.Table) showing `stat`: a
    2D histogram Paraver computes into the same cells, over the table's time window.

    State x location: `State As Is` (code colours), a column per state code from the table's
    smallest to its largest, empty columns hidden. MPI call x location: `Last Evt Val` of the
    trace's MPI event types, a column per MPI call value from 1 (outside MPI, 0, is left out).
    Time in nanoseconds; `% time` is Paraver's `% Window Time`, `bursts` / `count` `# Bursts`,
    average durations `Average Burst Time`. The other tables are refused with the reason:
    popview's duration bins are logarithmic and the IPC histogram's rows are IPC ranges (a
    Paraver histogram has equal-width columns and a row per object); the OpenMP construct
    table counts the constructs a thread is inside through its master, which no Paraver window
    of the OpenMP events does."""
    if stat not in table.stats:
        raise NotExportable(f"the table has no statistic {stat!r}")
    if stat not in TABLE_STATISTICS:
        raise NotExportable(f"{stat}: no Paraver histogram statistic computes popview's {stat!r}")
    t_end = max(int(definitions.t_end), 1)
    if table.kind == "states":
        control = _window("State", 1, Function("State As Is"))
        codes = [int(c) for c in table.col_keys]
    elif table.kind == "mpi":
        types = sorted(c for c, et in definitions.event_types.items() if et.paradigm == "mpi" and et.kind == "region"
                       and (present is None or c in present))
        if not types:
            raise NotExportable("the trace has no MPI event type with records for a Paraver window to filter on")
        control = _window("MPI call", 1, Function("Last Evt Val"), tuple(types), labels=_type_labels(definitions, types))
        codes = [_value_code(definitions, types, name) for name in table.col_labels]
    elif table.kind == "openmp":
        raise NotExportable("OpenMP construct x location counts the constructs a worker is inside through its "
                            "master's region, which no Paraver window of the OpenMP events computes")
    elif table.kind == "useful":
        raise NotExportable("the useful-burst duration bins are logarithmic: a Paraver histogram's columns have "
                            "one width")
    else:
        raise NotExportable(f"{table.title}: its rows are not Paraver objects (threads)")
    control.color_mode = CODE
    t0, t1 = int(table.t0), min(int(table.t1), t_end)
    whole = t0 <= 0 and t1 >= t_end
    control.begin_relative, control.end_relative = t0 / t_end, t1 / t_end
    control.begin_time, control.end_time = float(t0), float(t1)
    histogram = Histogram(f"{table.title}: {stat}", Binning(1, False, float(min(codes)), float(max(codes)), 1.0), 1,
                          TABLE_STATISTICS[stat], calculate_all=True, accumulator="Semantic",
                          data_range=(-DBL_MAX, DBL_MAX), burst_range=(-DBL_MAX, DBL_MAX),
                          limits="Alltrace" if whole else "Allwindow",
                          gui={"Analyzer2D.HideCols": "True", "Analyzer2D.HorizVert": "Horizontal"})
    description = title or f"popview histogram: {table.title}, {stat}"
    return CfgView("popview", "3.4", "new", description=description, windows=[control], histograms=[histogram])


def _value_code(definitions, types: list[int], name: str) -> int:
    """The event value the .pcf names `name` in one of `types` (a column of popview's MPI table)."""
    for code in types:
        for value, text in definitions.event_types[code].values.items():
            if int(value) != 0 and str(text) == name:
                return int(value)
    raise NotExportable(f"{name}: no value of the trace's MPI event types has this name")


def _type_name(definitions, code: int) -> str:
    et = definitions.event_types.get(code)
    return et.name if et is not None and et.name else f"event type {code}"


def initial_window(window: Window, t_end: int) -> tuple[int, int] | None:
    """The time window a cfg window opens at, as Paraver's loader sets it (later tags win:
    absolute begin / stop times after the relative ones); None for the whole run."""
    t0 = t1 = None
    if window.begin_relative is not None:
        t0 = window.begin_relative * t_end
    if window.end_relative is not None:
        t1 = window.end_relative * t_end
    if window.begin_time is not None:
        t0 = window.begin_time if window.begin_time < t_end else 0.0
    if window.end_time is not None:
        t1 = min(window.end_time, t_end)
    t0 = 0.0 if t0 is None else t0
    t1 = float(t_end) if t1 is None else t1
    if t1 <= t0 or (t0 <= 0 and t1 >= t_end):
        return None
    return int(round(t0)), int(round(t1))
