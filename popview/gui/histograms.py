"""The Histograms pane: Paraver-style tables of the current window.

The window is the timeline's visible range, the focus window, or the whole
run. Tables are computed off the GUI thread; a cell click marks its records
on the timeline; every table exports to CSV.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QGridLayout, QHeaderView, QLabel, QStackedWidget, QTableView, QToolButton, QVBoxLayout,
    QWidget,
)

from popview.analysis import histograms
from popview.gui.jobs import Lane
from popview.gui.timeline.highlight import channel as highlight_channel
from popview.gui.widgets.colorscale import colour
from popview.gui.widgets.shown import WhenShown
from popview.gui.widgets.units import format_value

WINDOWS = ("timeline", "focus", "whole")
WINDOW_LABELS = {"timeline": "Timeline window", "focus": "Focus window", "whole": "Whole run"}


class TableModel(QAbstractTableModel):
    """One statistic of a Table, each cell shaded by its share of the table's maximum."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table: histograms.Table | None = None
        self.stat = ""
        self._top = 0.0

    def set_table(self, table, stat: str) -> None:
        self.beginResetModel()
        self.table, self.stat = table, stat
        stats = table.stats[stat] if table is not None and stat in table.stats else None
        # the shades' scale, once: the header's fit to contents asked every cell, each took the maximum again
        self._top = float(np.nanmax(stats)) if stats is not None and np.isfinite(stats).any() else 0.0
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):  # noqa: N802,B008 - Qt override
        return 0 if self.table is None or parent.isValid() else len(self.table.row_labels)

    def columnCount(self, parent=QModelIndex()):  # noqa: N802,B008 - Qt override
        return 0 if self.table is None or parent.isValid() else len(self.table.col_labels)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if self.table is None or not index.isValid():
            return None
        v = float(self.table.stats[self.stat][index.row(), index.column()])
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(v)
        if role in (Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole):
            shade = self._shade(v)
            if shade is None:
                return None
            if role == Qt.ItemDataRole.BackgroundRole:
                return QBrush(shade)
            return QBrush(QColor("#000000" if shade.lightness() > 140 else "#ffffff"))   # readable on the shade
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _shade(self, v: float):
        top = self._top
        return colour(v / top if top > 0 and np.isfinite(v) and v > 0 else None) if v else None

    def _text(self, v: float) -> str:
        if not np.isfinite(v):
            return ""
        unit = self.table.units.get(self.stat, "")
        if unit == "ns":
            return format_value(v / 1e9, "s")
        if unit == "%":
            return f"{v:.2f} %"
        return format_value(v)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt override
        if self.table is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        labels = self.table.col_labels if orientation == Qt.Orientation.Horizontal else self.table.row_labels
        return labels[section] if section < len(labels) else None


def _table(exp, kind, t0, t1):
    """In the pool: (table, None), or (None, why there is none)."""
    try:
        return histograms.build(exp, kind, t0, t1), None
    except (histograms.NotAvailable, ValueError) as exc:
        return None, str(exc)


class HistogramPane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.table: histograms.Table | None = None
        self.visible_window: tuple[int, int] | None = None
        self.lane = Lane(self, "Histograms")
        self.kind_box = QComboBox()
        for key, label in histograms.KINDS.items():
            self.kind_box.addItem(label, key)
        self.stat_box = QComboBox(toolTip="Statistic shown in the cells")
        self.window_box = QComboBox(toolTip="Which time window the table covers")
        for key in WINDOWS:
            self.window_box.addItem(WINDOW_LABELS[key], key)
        self.export_button = QToolButton(text="CSV…", toolTip="Export the table as CSV")
        self.export_button.clicked.connect(self._export_dialog)
        self.cfg_button = QToolButton(text="Paraver cfg…",
                                      toolTip="Save the table as a Paraver cfg: a 2D histogram Paraver and paramedir "
                                              "compute into the same cells")
        self.cfg_button.clicked.connect(self._cfg_dialog)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: gray")
        self.model = TableModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.view.clicked.connect(self._cell_clicked)
        # one row when it fits, else two (beside a tall timeline): no choice is ever cut
        self.bar = QGridLayout()
        for box in (self.kind_box, self.stat_box, self.window_box):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._bar_rows = 0
        self._lay_out_bar(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(self.bar)
        # no table (a profile, no records of that kind): why, where the table would be
        self.message = QLabel(alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.view)
        self.pages.addWidget(self.message)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.status)
        # what the run, the focus or the timeline's window change is computed once the pane shows:
        # behind the Advisor's tab (the Overview) it was built and laid out at every opening
        self.refresh_when_shown = WhenShown(self, self.refresh)
        self._refresh_timer = QTimer(self, singleShot=True, interval=300, timeout=self.refresh_when_shown)
        self.kind_box.currentIndexChanged.connect(lambda _: self.refresh())
        self.window_box.currentIndexChanged.connect(lambda _: self.refresh())
        self.stat_box.currentTextChanged.connect(self._stat_chosen)
        state.currentExperimentChanged.connect(self.refresh_when_shown)
        state.focusChanged.connect(lambda _: self._window_may_change("focus"))
        state.timeWindowChanged.connect(self._timeline_window)
        self.refresh()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._lay_out_bar(1 if self.width() >= self._bar_width() else 2)

    def _bar_width(self) -> int:
        """The width the toolbar needs on one row."""
        widgets = self._bar_widgets()
        return sum(w.sizeHint().width() for w in widgets) + 4 * self.bar.horizontalSpacing() + 8

    def _bar_widgets(self) -> tuple:
        return self.kind_box, self.stat_box, self.window_box, self.export_button, self.cfg_button

    def _lay_out_bar(self, rows: int) -> None:
        if rows == self._bar_rows:
            return
        self._bar_rows = rows
        for w in self._bar_widgets():
            self.bar.removeWidget(w)
        # two rows: the table's kind (the longest names) alone on the first
        places = ((0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 1), (0, 4, 1)) if rows == 1 else \
            ((0, 0, 4), (1, 0, 1), (1, 1, 1), (1, 2, 1), (1, 3, 1))
        for w, (row, column, span) in zip(self._bar_widgets(), places):
            self.bar.addWidget(w, row, column, 1, span, Qt.AlignmentFlag.AlignLeft)
        for column in range(6):
            self.bar.setColumnStretch(column, 1 if column == (5 if rows == 1 else 4) else 0)

    # ---- computing ------------------------------------------------------------
    def window(self) -> tuple[int | None, int | None]:
        which = self.window_box.currentData()
        focus = self.state.focus
        if which == "focus" and focus.kind == "window":
            return focus.t0, focus.t1
        if which == "timeline" and self.visible_window is not None:
            return self.visible_window
        return None, None

    def refresh(self, wait: bool = False) -> None:
        """Recompute the table in the background (`wait`: and wait for it)."""
        exp = self.state.current
        if exp is None or not exp.is_trace:
            self.lane.cancel()
            self._show(None, "a profile has no records to build histograms from" if exp is not None else
                       "open a trace to see its tables")
            return
        t0, t1 = self.window()
        kind = self.kind_box.currentData()
        self.status.setText("computing…")
        self.status.show()
        self.lane.submit(lambda: _table(exp, kind, t0, t1), self._ready)
        if wait:
            self.lane.wait()

    def _window_may_change(self, which: str) -> None:
        if self.window_box.currentData() == which:
            self._refresh_timer.start()

    def _timeline_window(self, t0, t1) -> None:
        self.visible_window = (int(t0), int(t1))
        self._window_may_change("timeline")

    def _ready(self, result, error) -> None:
        table, why = result if error is None else (None, error.splitlines()[0])
        self._show(table, why)

    def _show(self, table, error) -> None:
        self.table = table
        stat = self.stat_box.currentText()
        self.stat_box.blockSignals(True)
        self.stat_box.clear()
        if table is not None:
            self.stat_box.addItems(list(table.stats))
            self.stat_box.setCurrentText(stat if stat in table.stats else next(iter(table.stats)))
        self.stat_box.blockSignals(False)
        self.model.set_table(table, self.stat_box.currentText())
        self.export_button.setEnabled(table is not None)
        self.cfg_button.setEnabled(table is not None)
        self.stat_box.setEnabled(table is not None)
        self.pages.setCurrentWidget(self.view if table is not None else self.message)
        self.status.setVisible(table is not None)
        if table is None:
            self.status.setText(f"not available: {html.escape(error or '')}")
            self.message.setText(f"Not available: {error or ''}")
        else:
            self.status.setText(f"{table.title}, {format_value((table.t1 - table.t0) / 1e9, 's')} window "
                                f"from {format_value(table.t0 / 1e9, 's')} · " +
                                "".join(f"{n} · " for n in table.notes) + "click a cell to mark its records")

    def _stat_chosen(self, stat: str) -> None:
        if self.table is not None and stat in self.table.stats:
            self.model.set_table(self.table, stat)

    # ---- actions ------------------------------------------------------------------
    def _cell_clicked(self, index) -> None:
        exp = self.state.current
        if self.table is None or exp is None:
            return
        intervals = histograms.cell_intervals(exp, self.table, index.row(), index.column())
        highlight_channel(self.state).intervals.emit(exp, intervals)
        if self.table.kind in ("states", "mpi", "openmp", "useful"):
            self.state.select_location(int(self.table.row_keys[index.row()]))
        self.status.setText(f"{len(intervals[0])} records marked on the timeline")

    def export_csv(self, path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            histograms.write_csv(self.table, self.stat_box.currentText(), f)

    def save_cfg(self, path, also=None) -> str | None:
        """The table and statistic shown as a Paraver cfg at `path` (analysis.cfg.export.histogram_cfg),
        written on a background lane; how it went is shown under the table and given to `also`
        (the reason it was not saved is also returned when already known: save_in_background)."""
        from pathlib import Path

        from popview.analysis.cfg.export import histogram_cfg, present_event_types
        from popview.gui.widgets.cfgpath import save_in_background

        exp, stat, table = self.state.current, self.stat_box.currentText(), self.table
        if table is None or exp is None:
            return "no table is shown"
        name = html.escape(Path(path).name)

        def report(reason) -> None:
            self.status.setText(f"saved as the Paraver cfg {name}" if reason is None else
                                f"{name} not saved: {html.escape(reason)}")
            if also is not None:
                also(reason)

        return save_in_background(self, lambda: histogram_cfg(
            exp.definitions, table, stat, present_event_types(exp.reader),
            title=f"popview histogram of {exp.name}: {table.title}, {stat}"), path, report)

    def _cfg_dialog(self) -> None:
        from popview.gui.widgets.cfgpath import ask_cfg_path

        path = ask_cfg_path(self, "Save table as Paraver cfg", f"{self.table.kind}.cfg") if self.table else None
        if path is not None:
            self.save_cfg(path)

    def _export_dialog(self) -> None:
        if self.table is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export table", f"{self.table.kind}.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)
