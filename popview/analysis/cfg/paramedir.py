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

from .evaluate import (TIME_STATISTICS, UNIT_NS, HistogramTable, NotEvaluated, TraceColumns, evaluate_histogram,
                       window_units)
from .levels import Hierarchy, LevelError
from .model import CfgView, Histogram

PRECISION = 2          # ParaverConfig's default histogram precision


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
    loaded)."""
    wanted: set[int] = set()
    for window in view.windows:
        if window.derived:
            continue
        criterion = window.filters.criteria.get("evt_type")
        if criterion is None or criterion.function == "All":
            return False
        wanted.update(int(v) for v in criterion.values)
    if not wanted:
        return False
    types = trace.events.get("type")
    present = np.unique(types) if types is not None and len(types) else np.zeros(0, np.int64)
    return not np.isin(np.fromiter(wanted, np.int64), present).any()


def evaluate_cfg(view: CfgView, trace: TraceColumns, rows: list[str],
                 definitions=None, as_paramedir: bool = False) -> tuple[list[CfgTable], list[Skipped]]:
    """Every histogram of `view` on `trace`: the tables evaluated, and the histograms skipped.
    `definitions` (the trace's) name the columns of states and event values as Paraver does.
    `as_paramedir`: refuse, as paramedir does, a cfg none of whose filtered event types is in
    the trace (every histogram skipped with that reason)."""
    tables, skipped = [], []
    if not view.histograms:
        skipped.append(Skipped(view.source, "the cfg has no histogram (timelines only): paramedir writes nothing"))
    elif as_paramedir and no_filtered_event_present(view, trace):
        return [], [Skipped(h.name, NO_EVENTS) for h in view.histograms]
    for histogram in view.histograms:
        try:
            result = evaluate_histogram(view, histogram, trace)
        except NotEvaluated as exc:
            reason, prefix = str(exc), f"histogram {histogram.name!r}: "
            skipped.append(Skipped(histogram.name, reason[len(prefix):] if reason.startswith(prefix) else reason))
            continue
        except KeyError as exc:         # a window position the cfg does not have
            skipped.append(Skipped(histogram.name, str(exc.args[0])))
            continue
        tables.append(_table(view, histogram, result, rows, definitions, _levels_or_none(trace)))
    return tables, skipped


def _levels_or_none(trace: TraceColumns) -> Hierarchy | None:
    try:
        return trace.levels()
    except LevelError:
        return None


def level_labels(level: str, n_rows: int, hierarchy: Hierarchy | None, definitions=None) -> list[str]:
    """Paraver's row labels above the thread level (LabelConstructor::objectLabel with its
    level tag): TASK a.t, APPL a, WORKLOAD; NODE and CPU rows by the .row file's names when
    it has them, else NODE n (0-based, as the kernel writes it) and CPU n.c; SYSTEM."""
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
        return [f"NODE {i}" for i in range(n_rows)]
    node_cpus = hierarchy.node_cpus if hierarchy is not None and hierarchy.node_cpus else (n_rows,)
    node = np.repeat(np.arange(len(node_cpus)), node_cpus)
    first = np.r_[0, np.cumsum(node_cpus)][:-1]
    return [f"CPU {node[i] + 1}.{i - first[node[i]] + 1}" for i in range(n_rows)]


def _table(view: CfgView, histogram: Histogram, result: HistogramTable, rows: list[str],
           definitions, hierarchy: Hierarchy | None = None) -> CfgTable:
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
    selected = selected_rows(histogram, len(rows))
    if selected is not None:                           # Analyzer2D.Objects: the rows the histogram shows
        values, rows = values[..., selected, :], [rows[i] for i in selected]
    names = value_names(control, definitions)
    labels = list(rows) if result.partners else \
        _column_labels(histogram.columns, result.columns, names, result.column_step, result.column_top)
    plane_labels, plane_shown = None, 0
    if result.planes is not None:                      # 3D: the planes with values, labelled as columns are
        with_values = np.flatnonzero(result.counted)
        plane_names = value_names(view.window(histogram.planes.window), definitions)
        all_labels = _column_labels(histogram.planes, result.planes, plane_names, result.plane_step, result.plane_top)
        values, plane_labels = values[with_values], [all_labels[i] for i in with_values]
        if histogram.plane_shown is not None:
            lower = result.planes[with_values]
            step = np.r_[np.diff(result.planes), 1.0][with_values]
            hit = np.flatnonzero((lower <= histogram.plane_shown) & (histogram.plane_shown < lower + step))
            plane_shown = int(hit[0]) if len(hit) else 0
    if histogram.gui.get("Analyzer2D.HideCols", "").lower() == "true":      # the cfg hides empty columns
        shown = np.flatnonzero((values != 0).any(axis=tuple(range(values.ndim - 1))))
        values, labels = values[..., shown], [labels[i] for i in shown]
    return CfgTable(histogram.name, control.name, histogram.statistic or "", unit, list(rows), labels, values,
                    plane_labels, plane_shown)


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
    types; 0 is 'End' when the .pcf does not name it, as paramedir labels it)."""
    function = window.functions.get("thread")
    if definitions is None or window.derived or function is None:
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
    names: dict[int, str] = {0: "End"}          # Paraver's name of an event value 0 the .pcf does not name
    for code in sorted(codes):
        event_type = definitions.event_types.get(code)
        if event_type is not None:
            names.update({int(v): str(n) for v, n in event_type.values.items()})
    return names


def _column_labels(b, lower: np.ndarray, names: dict[int, str], step: float | None = None,
                   top: float | None = None) -> list[str]:
    """LabelConstructor::histoColumnLabel: a whole minimum and a delta of 1 give discrete
    columns labelled by their value (a state's name for State As Is); otherwise each column is
    the range [lower..upper), the last one [lower..maximum]."""
    if b.compute and step is not None and top is not None:      # a computed range: Paraver's arithmetic
        minimum, maximum = float(lower[0]), float(top)
        delta = (maximum - minimum) / len(lower)
        bounds = [i * delta + minimum for i in range(len(lower))]
        return [f"[{_grouped(v)}..{_grouped(maximum)}]" if v + delta >= maximum else
                f"[{_grouped(v)}..{_grouped(v + delta)})" for v in bounds]
    if b.compute and step is not None:                 # a computed range of COMPUTED_COLUMNS columns
        delta, minimum, maximum = step, float(lower[0]), float(lower[-1] + step)
    elif b.compute or b.delta is None or b.minimum is None:
        delta, minimum, maximum = 1.0, 0.0, float(lower[-1]) + 1 if len(lower) else 1.0
    else:
        delta, minimum, maximum = float(b.delta), float(b.minimum), float(b.maximum)
    labels = []
    for value in lower:
        if delta == 1.0 and float(minimum).is_integer():
            labels.append(names.get(int(value), f"{int(value)}"))
        elif value + delta >= maximum:
            labels.append(f"[{_grouped(value)}..{_grouped(maximum)}]")
        else:
            labels.append(f"[{_grouped(value)}..{_grouped(value + delta)})")
    return labels


def _number(v: float) -> str:
    return f"{v:.{PRECISION}f}"


def _grouped(v: float) -> str:
    """A range bound as Paraver's LabelConstructor writes it: thousands grouped by commas."""
    return f"{v:,.{PRECISION}f}"


def format_table(table: CfgTable) -> str:
    """The text paramedir writes for one histogram (horizontal, with labels); a 3D one is each
    plane with values, its label on a line before it (TextOutput::dumpHistogram)."""
    if table.plane_labels is not None:
        many = len(table.plane_labels) > 1
        return "".join((f"{label}\n" if many else "") + _format_plane(table, plane)
                       for label, plane in zip(table.plane_labels, table.values))
    return _format_plane(table, table.values)


def _format_plane(table: CfgTable, v: np.ndarray) -> str:
    lines = ["\t" + "".join(f"{label}\t" for label in table.col_labels)]
    for label, row in zip(table.row_labels, v):
        lines.append(f"{label}\t" + "".join(f"{_number(x)}\t" for x in row))
    lines.append("")
    for name, row in zip(TOTALS, column_totals(v)):
        lines.append(f"{name}\t" + "".join(f"{_total(x)}\t" for x in row))
    lines.append("")
    return "\n".join(lines) + "\n"


TOTALS = ("Total", "Average", "Maximum", "Minimum", "StDev", "Avg/Max")


def column_totals(v: np.ndarray) -> list[np.ndarray]:
    """Paraver's HistogramTotals per column, over the cells that have a value (popview: the
    non-zero cells; an empty cell, such as a thread's own column in a communication matrix,
    is left out of the average, minimum and standard deviation, as paramedir leaves it):
    total, average, maximum, minimum, population standard deviation, average / maximum (NaN,
    written -nan as paramedir writes it, for a column without values)."""
    v = np.asarray(v, np.float64).reshape(-1, v.shape[-1]) if v.size else np.zeros((0, v.shape[-1]))
    has = v != 0
    n = has.sum(axis=0)
    total, squares = np.zeros(v.shape[1]), np.zeros(v.shape[1])
    for row in v:                  # row after row, as HistogramTotals adds them (the last digit shows)
        total += row
        squares += row * row
    average = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
    maximum = np.where(has, v, -np.inf).max(axis=0, initial=-np.inf)
    minimum = np.where(has, v, np.inf).min(axis=0, initial=np.inf)
    maximum, minimum = np.where(n > 0, maximum, 0.0), np.where(n > 0, minimum, 0.0)
    square = np.divide(squares, n, out=np.zeros_like(total), where=n > 0)
    stdev = np.sqrt(np.abs(square - average * average))      # HistogramTotals: sqrt(fabs(...))
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_max = np.where(maximum != 0, average / np.where(maximum != 0, maximum, 1.0), np.nan)
    return [total, average, maximum, minimum, stdev, avg_max]


def _total(x: float) -> str:
    return "-nan" if np.isnan(x) else _number(x)


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
