"""A cfg's histograms as tables, and the tab-separated text paramedir writes for each.

`evaluate_cfg` evaluates every histogram of a cfg that the engine (`evaluate`) can evaluate
and names, for every other one, the histogram and why not. `format_table` writes one table
as Paraver's TextOutput::dumpHistogram does (horizontal, with labels): a header line of a tab
then each column label followed by a tab; one line per row (row label, tab, each value
followed by a tab); an empty line; the Total, Average, Maximum, Minimum, StDev and Avg/Max
lines over the rows' cells that have a value; an empty line. Numbers are fixed-point with the histogram precision
(Paraver's default, 2 decimals). A Time statistic is in the control window's units,
an Integral's time in the data window's.
No Qt.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .evaluate import (TIME_STATISTICS, UNIT_NS, HistogramTable, NotEvaluated, Timeline, TraceColumns, _sorted_unique,
                       compose_values, evaluate_histogram, evaluate_window,
                       selected_events, window_units)
from .labels import Namer, info_type
from .levels import Hierarchy, LevelError
from .model import CfgView, Function, Histogram

PRECISION = 2          # ParaverConfig's default histogram precision


@dataclass(frozen=True)
class Options:
    """paramedir's output options: -tu (timelines in trace units), -e (hide empty columns), -p
    (only the selected plane of a 3D histogram), -npr (10 decimals instead of the preferences')."""
    trace_units: bool = False
    empty_columns: bool = False
    only_plane: bool = False
    precision: int = PRECISION


@dataclass
class CfgTable:
    """One evaluated histogram: values[row, column], labelled as paramedir labels them."""
    name: str                    # the histogram's name in the cfg
    window: str                  # its control window's name
    statistic: str
    unit: str                    # "Nanoseconds" ... for a time statistic, "" otherwise
    row_labels: list[str]
    col_labels: list[str]
    values: np.ndarray           # (rows, columns) float64; 3D: (planes, rows, columns)
    plane_labels: list[str] | None = None     # 3D: each plane's label (the planes with values)
    plane_shown: int = 0                      # 3D: the plane Paraver shows first (3D_FixedValue's, if it has values)
    plane_count: int = 0                      # 3D: how many planes the histogram has (with values or not)
    printed: list[list[int]] | None = None    # per plane: the columns paramedir prints, in its order (None: all)
    present: np.ndarray | None = None         # the cells Paraver has, as `values` (None: the non-zero ones)


@dataclass
class Skipped:
    """A histogram popview does not evaluate, and why (one line)."""
    name: str
    reason: str


def row_labels(definitions) -> list[str]:
    """Paraver's thread labels: the .row names when the trace has them, else THREAD a.t.th."""
    labels = []
    for loc in definitions.locations:
        if loc.kind != "thread":
            continue
        labels.append(loc.name or f"THREAD 1.{loc.process + 1}.{loc.thread + 1}")
    return labels


NO_EVENTS = "None of the events specified in the filter appear in the trace (paramedir: File creation aborted)"


def no_filtered_event_present(view: CfgView, trace: TraceColumns) -> bool:
    """Paraver's CFGLoader refuses a cfg (paramedir: 'None of the events specified in the
    filter appear in the trace. File creation aborted.') when no event it may read is in the
    trace: every single window filters on event types (a window taking all events lets the
    cfg load) and none of those types is in the trace. With some present it loads (a warning).
    Checked with paramedir on EPOCH (PyPOP's omp_total_runtime refused, omp_useful_computation
    loaded). A range filter [x,y] counts any type of the range the trace has (cfg.cpp's
    pickSymbols: anyEventLoaded), as on Extrae-course prime, which has no type at the ends of
    in_MPI_call.cfg's 50000001-50000005."""
    wanted: set[int] = set()
    present = None
    for window in view.windows:
        if window.derived:
            continue
        criterion = window.filters.criteria.get("evt_type")
        if criterion is None or criterion.function in ("All", "None"):
            return False
        if criterion.function == "[x,y]" and len(criterion.values) >= 2:    # any type in the range (anyEventLoaded)
            present = trace_event_types(trace) if present is None else present
            low, high = int(criterion.values[0]), int(criterion.values[1])
            if ((present >= low) & (present <= high)).any():
                return False
            continue
        wanted.update(int(v) for v in criterion.values)
    if not wanted:
        return present is not None
    present = trace_event_types(trace) if present is None else present
    return not np.isin(np.fromiter(wanted, np.int64), present).any()


def trace_event_types(trace: TraceColumns) -> np.ndarray:
    """The event types the trace has records of (Paraver's loaded events), sorted; read once per trace."""
    if getattr(trace, "_event_types", None) is None:
        types = trace.events.get("type")
        trace._event_types = _sorted_unique(np.asarray(types, np.int64)) if types is not None and len(types) \
            else np.zeros(0, np.int64)
    return trace._event_types


def evaluate_cfg(view: CfgView, trace: TraceColumns, rows: list[str],
                 definitions=None, as_paramedir: bool = False) -> tuple[list[CfgTable], list[Skipped]]:
    """Every histogram of `view` on `trace`: the tables evaluated, and the histograms skipped.
    `definitions` (the trace's) name the columns of states and event values as Paraver does.
    `as_paramedir`: refuse, as paramedir does, a cfg none of whose filtered event types is in
    the trace (every histogram skipped with that reason)."""
    tables, skipped = [], []
    present = lambda: trace_event_types(trace)      # noqa: E731  (read only when a label needs it)
    if not view.histograms:
        skipped.append(Skipped(view.source, "the cfg has no histogram (timelines only)"))
    elif as_paramedir and no_filtered_event_present(view, trace):
        return [], [Skipped(h.name, NO_EVENTS) for h in view.histograms]
    for histogram in view.histograms:
        result = evaluate_one(view, histogram, trace, rows, definitions, present)
        (tables if isinstance(result, CfgTable) else skipped).append(result)
    return tables, skipped


def evaluate_one(view: CfgView, histogram: Histogram, trace: TraceColumns, rows: list[str], definitions=None,
                 present=None, hide_empty: bool = False) -> CfgTable | Skipped:
    """One histogram of `view`: its table, or why it is not evaluated (`hide_empty`: paramedir's -e)."""
    try:
        result = evaluate_histogram(view, histogram, trace)
    except NotEvaluated as exc:
        reason, prefix = str(exc), f"histogram {histogram.name!r}: "
        return Skipped(histogram.name, reason[len(prefix):] if reason.startswith(prefix) else reason)
    except KeyError as exc:         # a window position the cfg does not have
        return Skipped(histogram.name, str(exc.args[0]))
    if present is None:
        present = lambda: trace_event_types(trace)      # noqa: E731
    return _table(view, histogram, result, rows, definitions, present, _levels_or_none(trace), hide_empty)


@dataclass
class JobOutput:
    """What paramedir writes for one cfg (api/paramedir.cpp, loadCFGs): the cfg's last histogram
    as a table, or, when it has none, its last window's timeline (a .csv); None and why not."""
    text: str | None
    timeline: bool = False
    skipped: list[Skipped] | None = None


def paramedir_job(view: CfgView, trace: TraceColumns, definitions, rows: list[str] | None = None,
                  options: Options = Options()) -> JobOutput:
    """The output paramedir writes for `view` on `trace`: only the last histogram (the others
    are computed and dropped), else the last window as TextOutput::dumpWindow writes it; a cfg
    none of whose filtered event types is in the trace is refused (nothing written)."""
    rows = row_labels(definitions) if rows is None else rows
    if no_filtered_event_present(view, trace):
        return JobOutput(None, not view.histograms, [Skipped(h.name, NO_EVENTS) for h in view.histograms]
                         or [Skipped(view.windows[-1].name if view.windows else view.source, NO_EVENTS)])
    if view.histograms:
        result = evaluate_one(view, view.histograms[-1], trace, rows, definitions, hide_empty=options.empty_columns)
        if isinstance(result, Skipped):
            return JobOutput(None, False, [result])
        return JobOutput(format_table(result, options.precision, options.only_plane), False, [])
    if not view.windows:
        return JobOutput(None, True, [Skipped(view.source, "the cfg has neither a histogram nor a window")])
    window = view.windows[-1]
    try:
        timeline = evaluate_window(view, window.position, trace)
    except (NotEvaluated, KeyError) as exc:
        reason, prefix = str(exc.args[0] if isinstance(exc, KeyError) else exc), f"window {window.position} {window.name!r}: "
        return JobOutput(None, True, [Skipped(window.name, reason[len(prefix):] if reason.startswith(prefix) else reason)])
    text = format_timeline(window, with_instants(view, window, timeline, trace), trace.t_end,
                           object_labels(definitions, window.level, timeline.n_rows), options.trace_units)
    return JobOutput(text, True, [])


def _levels_or_none(trace: TraceColumns) -> Hierarchy | None:
    try:
        return trace.levels()
    except LevelError:
        return None


def level_labels(level: str, n_rows: int, hierarchy: Hierarchy | None, definitions=None) -> list[str]:
    """Paraver's row labels above the thread level (LabelConstructor::objectLabel with its
    level tag): TASK a.t, APPL a, WORKLOAD; NODE and CPU rows by the .row file's names when
    it has them, else NODE n and CPU n.c; SYSTEM."""
    if level == "task":
        appl = hierarchy.task_appl if hierarchy is not None else np.zeros(n_rows, np.int64)
        first = {int(a): i for i, a in reversed(list(enumerate(appl)))}
        return [f"TASK {int(appl[i]) + 1}.{i - first[int(appl[i])] + 1}" for i in range(n_rows)]
    if level == "appl":
        return [f"APPL {i + 1}" for i in range(n_rows)]
    if level in ("workload", "system"):
        return [level.upper()] * n_rows
    names = list((getattr(definitions, "flags", None) or {}).get(f"{level}_names") or [])
    if len(names) == n_rows:
        return [str(n) for n in names]
    if level == "node":
        return [f"NODE {i + 1}" for i in range(n_rows)]
    node_cpus = hierarchy.node_cpus if hierarchy is not None and hierarchy.node_cpus else (n_rows,)
    node = np.repeat(np.arange(len(node_cpus)), node_cpus)
    first = np.r_[0, np.cumsum(node_cpus)][:-1]
    return [f"CPU {node[i] + 1}.{i - first[node[i]] + 1}" for i in range(n_rows)]


def _table(view: CfgView, histogram: Histogram, result: HistogramTable, rows: list[str],
           definitions, present_types=None, hierarchy: Hierarchy | None = None,
           hide_empty: bool = False) -> CfgTable:
    control = view.window(histogram.columns.window)
    data = view.window(histogram.data_window)
    values = np.asarray(result.table, np.float64)
    unit = ""
    if histogram.statistic in TIME_STATISTICS:         # StatTime, StatAvgBurstTime: the control window's units
        unit = window_units(control)
        values = values / UNIT_NS.get(unit, 1.0)
    elif histogram.statistic == "Integral":            # StatIntegral: the data window's time units
        values = values / UNIT_NS.get(window_units(data), 1.0)
    if control.level != "thread":                      # TASK a.t, APPL a, ... (Paraver's level tags)
        rows = level_labels(control.level, values.shape[-2], hierarchy, definitions)
    elif len(rows) != values.shape[-2]:
        rows = [f"THREAD 1.{i + 1}.1" for i in range(values.shape[-2])]
    present = np.asarray(result.present if result.present is not None else values != 0, bool)
    selected = selected_rows(histogram, len(rows))
    if selected is not None:                           # Analyzer2D.Objects: the rows the histogram shows
        values, rows = values[..., selected, :], [rows[i] for i in selected]
        present = present[..., selected, :]
    short = histogram.gui.get("Analyzer2D.ShortHeaderLabels", "True").lower() != "false"
    labels = list(rows) if result.partners else \
        column_labels(result.column_axis, Namer(view, control, definitions, present_types), short)
    plane_labels, plane_shown, plane_count = None, 0, 0
    planes = values[None] if result.planes is None else values
    with_values = np.arange(1) if result.planes is None else np.flatnonzero(result.counted)
    shown = shown_plane(histogram, result)
    if result.planes is not None:                      # 3D: the planes with values, labelled as columns are
        plane_window = view.window(histogram.planes.window)
        all_labels = column_labels(result.plane_axis, Namer(view, plane_window, definitions, present_types), short)
        plane_labels, plane_count = [all_labels[i] for i in with_values], len(result.planes)
        plane_shown = int(np.searchsorted(with_values, shown)) if shown in with_values else 0
    printed = [] if result.partners else printed_columns(histogram, planes, present if result.planes is not None
                                                         else present[None], with_values, shown, hide_empty)
    if result.planes is not None:
        values, present = planes[with_values], present[with_values]
    if histogram.gui.get("Analyzer2D.HideCols", "").lower() == "true":      # the cfg hides empty columns
        kept = (values != 0).any(axis=tuple(range(values.ndim - 1)))
        kept[[c for plane in printed for c in plane]] = True        # paramedir may print an empty one
        kept = np.flatnonzero(kept)
        where = {c: i for i, c in enumerate(kept)}
        values, present, labels = values[..., kept], present[..., kept], [labels[i] for i in kept]
        printed = [[where[c] for c in plane] for plane in printed]
    return CfgTable(histogram.name, control.name, histogram.statistic or "", unit, list(rows), labels, values,
                    plane_labels, plane_shown, plane_count, printed or None, present)


def shown_plane(histogram: Histogram, result: HistogramTable) -> int:
    """The plane Paraver selects after computing (HistogramProxy::execute): the first plane with
    values, or the last one with values whose [min + delta x i, min + delta x i + 1) holds the
    cfg's 3D_FixedValue."""
    if result.planes is None:
        return 0
    with_values = np.flatnonzero(result.counted)
    shown = int(with_values[0]) if len(with_values) else 0
    if histogram.plane_shown is not None:
        axis = result.plane_axis
        low = axis.minimum + axis.delta * np.arange(axis.count)
        hit = np.flatnonzero((low <= histogram.plane_shown) & (histogram.plane_shown < low + 1) & result.counted)
        shown = int(hit[-1]) if len(hit) else shown
    return shown


SORT_CRITERIA = {"Total": 0, "Average": 1, "Maximum": 2, "Minimum": 3, "StDev": 4, "Avg/Max": 5}


def printed_columns(histogram: Histogram, planes: np.ndarray, present: np.ndarray, with_values: np.ndarray,
                    shown: int, hide_empty: bool = False) -> list[list[int]]:
    """Per plane with values, the columns paramedir prints, in its order (TextOutput::dumpHistogram
    with HistogramProxy::getSemanticRealColumn and getSemanticSortedColumn): HideCols keeps the
    plane's columns whose total is not 0; SortCols orders the columns by the shown plane's column
    totals (SortCriteria, stable, largest first unless SortReverse) and prints, in every plane,
    the first k of that order, k the plane's number of columns kept. `hide_empty` (paramedir -e)
    hides too but, as getSemanticRealColumn maps columns only by the cfg's HideCols, prints the
    first k columns (without SortCols)."""
    gui = histogram.gui
    hide_cfg = gui.get("Analyzer2D.HideCols", "").lower() == "true"
    hide = hide_cfg or hide_empty
    sort = gui.get("Analyzer2D.SortCols", "").lower() == "true"
    reverse = gui.get("Analyzer2D.SortReverse", "").lower() == "true"
    n = planes.shape[-1]
    order = None
    if sort:
        criterion = column_totals(planes[shown], present[shown])[SORT_CRITERIA.get(gui.get("Analyzer2D.SortCriteria", "Average"), 1)]
        order = np.argsort(criterion, kind="stable")
    out = []
    for p in with_values:
        kept = np.flatnonzero(planes[p].sum(axis=0) != 0) if hide else np.arange(n)
        k = len(kept)
        if sort:
            real = range(n - k, n) if (hide_cfg and reverse) else range(k)
            out.append([int(order[c]) if reverse else int(order[n - c - 1]) for c in real])
        elif hide_cfg:
            out.append([int(c) for c in (kept[::-1] if reverse else kept)])
        else:
            out.append([n - c - 1 for c in range(k)] if reverse else list(range(k)))
    return out


def selected_rows(histogram: Histogram, n_rows: int) -> np.ndarray | None:
    """The rows a histogram's `Analyzer2D.Objects` selects (0-based, those the trace has), as
    paramedir writes only them (parami's 3dh_instructions.cfg: 'Objects: 0' is THREAD 1.1.1
    alone); None for all rows (no tag, `All`, or a selection naming none of the trace's rows)."""
    text = histogram.gui.get("Analyzer2D.Objects", "").strip()
    if not text or text.lower() == "all":
        return None
    try:
        wanted = np.array(sorted({int(x) for x in text.split(",") if x.strip()}), np.int64)
    except ValueError:
        return None
    wanted = wanted[(wanted >= 0) & (wanted < n_rows)]
    if len(wanted) == 0 or len(wanted) == n_rows:
        return None
    return wanted


def value_names(window, definitions) -> dict[int, str]:
    """What Paraver's semanticLabel calls a whole value of `window`: a state's name (State As
    Is, Useful), an event value's name from the .pcf (Last / Next Evt Val of given event
    types; 0 is 'End' when the .pcf does not name it). The timelines' legends use it."""
    function = window.functions.get("thread")
    if definitions is None or window.derived or function is None:
        return {}
    if info_type(None, window) not in ("state", "event value"):   # Sign, Adding ...: plain numbers
        return {}
    if function.name in ("State As Is", "Useful"):          # Paraver's STATE_TYPE functions
        return {int(code): str(info["name"]) for code, info in definitions.states.items()
                if isinstance(info, dict) and info.get("name")}
    criterion = window.filters.criteria.get("evt_type")
    if function.name not in ("Last Evt Val", "Next Evt Val") or criterion is None:
        return {}
    wanted = [int(v) for v in criterion.values]
    if criterion.function == "=":
        codes = wanted
    elif criterion.function == "[x,y]" and len(wanted) == 2:
        codes = [c for c in definitions.event_types if wanted[0] <= c <= wanted[1]]
    else:
        return {}
    names: dict[int, str] = {0: "End"}
    for code in sorted(codes):
        event_type = definitions.event_types.get(code)
        if event_type is not None:
            names.update({int(v): str(n) for v, n in event_type.values.items()})
    return names


def column_labels(axis, namer: Namer, short: bool = True) -> list[str]:
    """LabelConstructor::histoColumnLabel for every column of `axis`: a whole minimum and a delta
    of 1 give one column per whole value, named as the window names it (semanticLabel, short
    labels: an event value's name without its [...]); otherwise each column is the range
    [column x delta + min..+ delta), the last one (reaching the maximum) [...max]."""
    minimum, maximum, delta = axis.minimum, axis.maximum, axis.delta
    labels = []
    for column in range(axis.count):
        low = column * delta + minimum
        if float(minimum).is_integer() and delta == 1.0:
            labels.append(namer.short(low) if short else namer(low))
        elif low + delta >= maximum:
            labels.append(f"[{_grouped(low)}..{_grouped(maximum)}]")
        else:
            labels.append(f"[{_grouped(low)}..{_grouped(low + delta)})")
    return labels


def _number(v: float, precision: int = PRECISION) -> str:
    return f"{v:.{precision}f}"


def _grouped(v: float) -> str:
    """A range bound as Paraver's LabelConstructor writes it: thousands grouped by commas."""
    return f"{v:,.{PRECISION}f}"


def format_table(table: CfgTable, precision: int = PRECISION, only_plane: bool = False) -> str:
    """The text paramedir writes for one histogram (horizontal, with labels); a 3D one is each
    plane with values, its label on a line before it when the histogram has more than one plane,
    with values or not (TextOutput::dumpHistogram: numPlanes > 1); in each plane the columns
    paramedir prints (`printed`); values with `precision` decimals; `only_plane`: the shown plane alone.
    """
    printed = table.printed or [list(range(len(table.col_labels)))] * max(1, len(table.plane_labels or ()))
    present = table.present if table.present is not None else table.values != 0
    if table.plane_labels is not None:
        many = table.plane_count > 1
        planes = list(zip(table.plane_labels, table.values, present, printed))
        if only_plane:
            planes = planes[table.plane_shown:table.plane_shown + 1]
        return "".join((f"{label}\n" if many else "") + _format_plane(table, plane, has, columns, precision)
                       for label, plane, has, columns in planes)
    return _format_plane(table, table.values, present, printed[0], precision)


def _format_plane(table: CfgTable, v: np.ndarray, present: np.ndarray, columns: list[int],
                  precision: int = PRECISION) -> str:
    v, present = v[:, columns], present[:, columns]
    lines = ["\t" + "".join(f"{table.col_labels[c]}\t" for c in columns)]
    for label, row in zip(table.row_labels, v):
        lines.append(f"{label}\t" + "".join(f"{_number(x, precision)}\t" for x in row))
    lines.append("")
    for name, row in zip(TOTALS, column_totals(v, present)):
        lines.append(f"{name}\t" + "".join(f"{_total(x, precision)}\t" for x in row))
    lines.append("")
    return "\n".join(lines) + "\n"


TOTALS = ("Total", "Average", "Maximum", "Minimum", "StDev", "Avg/Max")


def column_totals(v: np.ndarray, present: np.ndarray | None = None) -> list[np.ndarray]:
    """Paraver's HistogramTotals per column (KHistogramTotals::newValue and finish), over the
    cells Paraver has (`present`: a burst or message counted there; default the non-zero
    cells): total, average, maximum, minimum of the non-zero ones, population standard
    deviation sqrt(|(sum of squares - n avg^2) / n|), average / maximum (0 / 0 is NaN, written
    -nan as paramedir writes it). A column without cells is all 0 (average / maximum NaN)."""
    v = np.asarray(v, np.float64).reshape(-1, v.shape[-1]) if v.size else np.zeros((0, v.shape[-1]))
    has = (v != 0) if present is None else np.asarray(present, bool).reshape(v.shape)
    n = has.sum(axis=0)
    total, squares = np.zeros(v.shape[1]), np.zeros(v.shape[1])
    for row, row_has in zip(v, has):     # row after row, as HistogramTotals adds them (the last digit shows)
        total += np.where(row_has, row, 0.0)
        squares += np.where(row_has, row * row, 0.0)
    average = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
    maximum = np.where(has, v, -np.inf).max(axis=0, initial=-np.inf)
    nonzero = has & (v != 0)
    minimum = np.where(nonzero, v, np.inf).min(axis=0, initial=np.inf)
    maximum = np.where(n > 0, maximum, 0.0)
    minimum = np.where((n > 0) & nonzero.any(axis=0), minimum, 0.0)
    total = np.where(n > 0, total, 0.0)
    stdev = np.sqrt(np.abs(np.divide(squares - n * (average * average), n, out=np.zeros_like(total), where=n > 0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_max = average / maximum
    return [total, average, maximum, minimum, stdev, avg_max]


def _total(x: float, precision: int = PRECISION) -> str:
    if np.isnan(x):
        return "-nan"                   # glibc's text of 0.0 / 0.0
    return ("inf" if x > 0 else "-inf") if np.isinf(x) else _number(x, precision)


def parse_table(text: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """Read paramedir's text back: (column labels, {row label: values}), totals rows included
    (how PyPOP's load_paraver_histdata and basicanalysis read it)."""
    lines = text.split("\n")
    columns = [c for c in lines[0].split("\t")[1:] if c != ""]
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        parts = line.rstrip("\n").split("\t")
        rows[parts[0]] = np.array([float(x) for x in parts[1:] if x != ""])
    return columns, rows


# -- timelines: what paramedir writes for a cfg without a histogram -------------------------------

TIMELINE_PRECISION = 2        # ParaverConfig's default timeline precision


def object_labels(definitions, level: str = "thread", n_rows: int | None = None) -> list[str]:
    """LabelConstructor::objectLabel without the level tag: a.t.th per thread, a.t per task, a
    per application, nothing for the workload (numbered from 1; the .row names are not used)."""
    threads = [loc for loc in definitions.locations if loc.kind == "thread"]
    if level == "task":
        return [f"1.{p + 1}" for p in sorted({loc.process for loc in threads})]
    if level == "appl":
        return [f"{a + 1}" for a in range(n_rows if n_rows is not None else 1)]
    if level == "workload":
        return [""] * (n_rows if n_rows is not None else 1)
    return [f"1.{loc.process + 1}.{loc.thread + 1}" for loc in threads]


def format_timeline(window, timeline, t_end: int, labels: list[str], trace_units: bool = False) -> str:
    """The text paramedir writes for a timeline (TextOutput::dumpWindow, one file): per row, from
    the interval holding the window's begin time up to the first one reaching its end time, a line
    'row label, begin, duration (both in the window's units), value', tab-separated, numbers
    fixed-point with the timeline precision (`trace_units`, paramedir -tu: begin and duration as
    whole trace units)."""
    from .export import initial_window
    t0, t1 = initial_window(window, t_end) or (0, t_end)
    t1 = min(t1, t_end)
    unit = window_unit_ns_or_us(window)
    row, begin, end, value = timeline.row, timeline.begin, timeline.end, timeline.value
    shown = end > t0
    # each row's intervals up to the first one whose end reaches t1
    reach = shown & (end >= t1)
    first_reach = np.full(timeline.n_rows, np.iinfo(np.int64).max)
    np.minimum.at(first_reach, row[reach], begin[reach])
    shown &= begin <= first_reach[row]
    row, begin, end, value = row[shown], begin[shown], end[shown], value[shown]
    p = TIMELINE_PRECISION
    if trace_units:
        line = ("{}\t{}\t{}\t{:." + str(p) + "f}\n").format
        return "".join(map(line, (labels[r] for r in row.tolist()), begin.tolist(), (end - begin).tolist(),
                           value.tolist()))
    line = ("{}\t{:." + str(p) + "f}\t{:." + str(p) + "f}\t{:." + str(p) + "f}\n").format
    return "".join(map(line, (labels[r] for r in row.tolist()), (begin / unit).tolist(),
                       ((end - begin) / unit).tolist(), value.tolist()))


def window_unit_ns_or_us(window) -> float:
    """Nanoseconds per unit of the window (traceUnitsToWindowUnits on a trace in ns)."""
    return UNIT_NS.get(window_units(window), 1e3)


# Event functions whose interval starts (Last-like) or ends (Next-like) at each event, and whether
# a zero-length interval holds the event's value (else 0: no time to average or measure)
EVENT_INTERVALS = {"Last Evt Val": (False, True), "Next Evt Val": (True, True), "Int. Between Evt": (False, False),
                   "Avg Last Evt Val": (False, False), "Avg Next Evt Val": (True, False), "Event Bytes": (False, False)}


def with_instants(view: CfgView, window, timeline, trace: TraceColumns):
    """The timeline with the zero-length intervals Paraver has where a row has several of a
    window's events at one instant (the engine keeps one interval per instant): a Last-like
    function starts an interval at each event (the earlier ones at that instant last no time), a
    Next-like one ends one at each (the later ones last no time); they hold the event's value
    (Last / Next Evt Val) or 0, composed as the window composes. A derived window has them
    where a parent has them, its operation on that value and the other parent's (its
    zero-length one at the same instant, in order, else the one holding the instant)."""
    row, time, value = _instants(view, window.position, trace) if window.level in ("thread", "task") else _NONE
    if len(row) == 0:
        return timeline
    rows = np.r_[timeline.row, row.astype(timeline.row.dtype)]
    begin = np.r_[timeline.begin, time]
    end = np.r_[timeline.end, time]
    order = np.lexsort((end, begin, rows))          # at one instant: the zero-length ones first, in order
    return Timeline(rows[order], begin[order], end[order], np.r_[timeline.value, value][order], timeline.n_rows)


_NONE = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))


def _instants(view: CfgView, position: int, trace: TraceColumns):
    """(row, time, value) of a window's zero-length intervals, sorted by row and time, in order."""
    window = view.window(position)
    if window.derived:
        return _derived_instants(view, window, trace)
    function = window.functions.get("thread")
    if function is None or function.name not in EVENT_INTERVALS or not _thread_rows(window, trace) \
            or any(f.name == "Stacked Val" for f in window.compose.values()):
        return _NONE
    following, valued = EVENT_INTERVALS[function.name]
    loc, time, value = selected_events(window, trace)
    same = (loc[1:] == loc[:-1]) & (time[1:] == time[:-1])
    if not same.any():
        return _NONE
    extra = np.r_[False, same] if following else np.r_[same, False]
    value = value[extra] if valued else np.zeros(int(extra.sum()))
    return loc[extra].astype(np.int64), time[extra].astype(np.int64), compose_values(window, value)


def _thread_rows(window, trace: TraceColumns) -> bool:
    """Whether a window's rows are the threads: thread level, or tasks of one thread whose task
    function gives the thread's value (Adding, Average, Maximum, Minimum, Thread i of thread 1)."""
    if window.level == "thread":
        return True
    function = window.functions.get("task", Function("Adding"))
    first = not function.params or not function.params[0] or function.params[0][0] == 1
    return window.level == "task" and trace.one_thread_per_task and (
        function.name in ("Adding", "Average", "Maximum", "Minimum") or (function.name == "Thread i" and first))


def _derived_instants(view: CfgView, window, trace: TraceColumns):
    from .evaluate import _OPERATIONS
    d = window.derivation
    if d.operation not in _OPERATIONS or not _thread_rows(window, trace) or \
            not all(_thread_rows(view.window(p), trace) for p in d.parents):
        return _NONE
    (ra, ta, va), (rb, tb, vb) = (_instants(view, p, trace) for p in d.parents)
    if len(ra) + len(rb) == 0:
        return _NONE
    parents = [evaluate_window(view, p, trace) for p in d.parents]
    span = np.int64(trace.t_end + 2)
    ka, kb = ra * span + ta, rb * span + tb
    rank_a, rank_b = _rank(ka), _rank(kb)
    # pair the i-th zero-length interval of one parent at an instant with the other's i-th there
    width = np.int64(max(int(rank_a.max(initial=0)), int(rank_b.max(initial=0))) + 1)
    pa, pb = ka * width + rank_a, kb * width + rank_b
    at = np.clip(np.searchsorted(pb, pa), 0, max(len(pb) - 1, 0))
    matched_a = (len(pb) > 0) & (pb[at] == pa) if len(pb) else np.zeros(len(pa), bool)
    right = np.where(matched_a, vb[at] if len(vb) else 0.0, _holding(parents[1], ra, ta, span))
    matched_b = np.isin(pb, pa[matched_a])
    left_b = _holding(parents[0], rb[~matched_b], tb[~matched_b], span)
    row = np.r_[ra, rb[~matched_b]]
    time = np.r_[ta, tb[~matched_b]]
    left = np.r_[va, left_b]
    right = np.r_[right, vb[~matched_b]]
    rank = np.r_[rank_a, rank_b[~matched_b]]
    order = np.lexsort((rank, time, row))
    value = _OPERATIONS[d.operation](left * d.factors[0], right * d.factors[1])
    return row[order], time[order], compose_values(window, value[order])


def _rank(keys: np.ndarray) -> np.ndarray:
    """Each item's position among the equal keys before it (keys sorted)."""
    if len(keys) == 0:
        return np.zeros(0, np.int64)
    start = np.r_[True, keys[1:] != keys[:-1]]
    first = np.flatnonzero(start)
    return np.arange(len(keys)) - first[np.cumsum(start) - 1]


def _holding(timeline, row: np.ndarray, time: np.ndarray, span: np.int64) -> np.ndarray:
    """The value of the interval of `timeline` holding each (row, time) (begin <= time < end), 0 if none."""
    keys = timeline.row.astype(np.int64) * span + timeline.begin
    at = np.searchsorted(keys, row * span + time, side="right") - 1
    ok = at >= 0
    at = np.clip(at, 0, None)
    if len(keys) == 0:
        return np.zeros(len(row))
    ok &= (timeline.row[at] == row) & (timeline.end[at] > time)
    return np.where(ok, timeline.value[at], 0.0)
