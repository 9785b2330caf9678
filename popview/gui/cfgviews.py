"""A Paraver view (.cfg) opened on the current run: its histograms as tables.

File > Open Paraver view (.cfg)... or a .cfg dropped on the window with a trace open makes
one pane per cfg (a dock beside the Histograms). Each histogram popview's cfg engine
evaluates is a tab named as in the cfg, its table shown with the Histograms pane's table
model; what the engine does not evaluate is listed with the reason. The cfg is read and
evaluated through the pane's Lane, never on the GUI thread.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QTabWidget, QVBoxLayout, QWidget

from popview.analysis import histograms
from popview.analysis.cfg import CfgError, read_cfg
from popview.analysis.cfg.evaluate import NotEvaluated, TraceColumns
from popview.failures import one_line
from popview.analysis.cfg.paramedir import UNIT_NS, evaluate_cfg, row_labels
from popview.gui.histograms import TableModel
from popview.gui.jobs import Lane


@dataclass
class Evaluated:
    """What the pool hands back: a Table per evaluated histogram, and (name, why) for the others."""
    cfg: str
    run: str
    tables: list[tuple[str, str, histograms.Table]] = field(default_factory=list)   # name, caption, table
    skipped: list[tuple[str, str]] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)
    error: str | None = None                       # the cfg or the run cannot be evaluated at all


def evaluate(path: Path, exp) -> Evaluated:
    """In the pool: read the cfg and evaluate its histograms on `exp` (CfgError and the
    engine's refusals come back as one-line reasons)."""
    try:
        view = read_cfg(path)
        trace = TraceColumns.from_cache(exp.reader, exp.definitions)
    except (CfgError, NotEvaluated, OSError) as exc:
        return Evaluated(path.name, exp.name, error=one_line(exc))
    tables, skipped = evaluate_cfg(view, trace, row_labels(exp.definitions), exp.definitions)
    result = Evaluated(path.name, exp.name, windows=[w.name for w in view.windows],
                       skipped=[(s.name, s.reason) for s in skipped])
    for t in tables:
        stat = t.statistic or "value"
        values, unit = t.values, ""
        if t.unit:                              # back to ns: the table model shows durations itself
            values, unit = t.values * UNIT_NS.get(t.unit, 1.0), "ns"
        caption = (f"control window <b>{html.escape(t.window)}</b> · statistic <b>{html.escape(stat)}</b>"
                   + (f" · cfg units {html.escape(t.unit)}" if t.unit else ""))
        table = histograms.Table(kind="cfg", title=t.name, row_labels=t.row_labels, col_labels=t.col_labels,
                                 stats={stat: values}, units={stat: unit}, t0=0, t1=int(trace.t_end),
                                 col_keys=np.arange(len(t.col_labels)), row_keys=np.arange(len(t.row_labels)))
        result.tables.append((t.name, caption, table))
    return result


class CfgViewPane(QWidget):
    """One cfg on one run."""

    def __init__(self, state, path: Path, exp, parent=None):
        super().__init__(parent)
        self.state, self.path, self.exp = state, Path(path), exp
        self.result: Evaluated | None = None
        self.error: str | None = None
        self.lane = Lane(self, "Paraver view")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.header = QLabel(f"<b>{html.escape(self.path.name)}</b> on {html.escape(exp.name)}: evaluating…")
        self.header.setWordWrap(True)
        layout.addWidget(self.header)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.not_evaluated = QLabel()
        self.not_evaluated.setWordWrap(True)
        self.not_evaluated.setTextFormat(Qt.TextFormat.RichText)
        self.not_evaluated.hide()
        layout.addWidget(self.not_evaluated)
        self.lane.submit(lambda: evaluate(self.path, exp), self._show)

    def _show(self, result, error) -> None:
        if error is None and result.error:
            error = result.error
        if error is not None:
            self.error = str(error)
            self.header.setText(f"<b>{html.escape(self.path.name)}</b> on {html.escape(self.exp.name)}: "
                                f"not opened: {html.escape(self.error)}")
            return
        self.result = result
        n, total = len(result.tables), len(result.tables) + len(result.skipped)
        windows = ", ".join(html.escape(w) for w in result.windows)
        self.header.setText(f"<b>{html.escape(result.cfg)}</b> on {html.escape(result.run)}: "
                            f"{n} of {total} histogram{'s' if total != 1 else ''} evaluated"
                            + (f" · windows: {windows}" if windows else ""))
        for name, caption, table in result.tables:
            page = QWidget()
            box = QVBoxLayout(page)
            box.setContentsMargins(0, 4, 0, 0)
            label = QLabel(caption)
            box.addWidget(label)
            view = QTableView()
            model = TableModel(view)
            model.set_table(table, next(iter(table.stats)))
            view.setModel(model)
            view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            box.addWidget(view, 1)
            self.tabs.addTab(page, name)
        if result.skipped:
            items = "".join(f"<li><b>{html.escape(name)}</b>: {html.escape(why)}</li>" for name, why in result.skipped)
            self.not_evaluated.setText(f"Not evaluated by popview:<ul style='margin:0'>{items}</ul>")
            self.not_evaluated.show()
        if not result.tables:
            self.tabs.hide()
