"""The scaling view: POP metrics of several runs side by side, and a plot.

Rows are the metrics of one model (a real tree), columns the runs
("16x4"), each cell coloured on the Advisor's red-to-green scale. The
reference run and strong / weak scaling can be changed; the plot shows the
speedup against the ideal and the top-level efficiencies against the
number of processing elements.
"""
from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (QApplication, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMenu,
                               QSplitter, QToolButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from popview.analysis.report import nodes, series, variants
from popview.analysis.report.scale import ACCEPTABLE, colour, text_on
from popview.analysis.report.svgplot import PALETTE
from popview.gui.advisor.model import tooltip_html
from popview.gui.advisor import palette
from popview.gui.advisor.pane import WINDOW_FOCI
from popview.gui.advisor.runs import series_name, series_runs
from popview.gui.jobs import Lane
from popview.gui.widgets import compiling
from popview.gui.widgets.compiling import waiting_text
from popview.gui.widgets.progress import JobProgress
from popview.gui.widgets.units import MICRO

PLOT_DEPTH = 1
"""Efficiencies down to this depth of the tree are drawn in the plot."""


LEGEND_COLUMNS = 3
LOW_PANE = 420
"""Below this height (px) the two plots go side by side: stacked, each had no room left for its curves."""
PLOT_MIN_WIDTH = 300
"""...when each still gets this width (px): a narrower plot's legend pushes its axes past its edge."""
TABLE_MIN_WIDTH = 420
"""The table's least width when a low pane widens its plots (_arrange_plots)."""


def legend_below(plot) -> pg.LegendItem:
    """The plot's legend under its axis, in columns: in a small dock it never covers the curves."""
    legend = pg.LegendItem(colCount=LEGEND_COLUMNS)
    plot.plotItem.layout.addItem(legend, 4, 1)
    plot.plotItem.legend = legend
    return legend


def fit_legend(plot) -> None:
    """As many legend columns (up to LEGEND_COLUMNS) as the plot's width holds: the legend
    shares the layout column of the axes, so a legend wider than the widget widened the
    axes past its right edge and cut off the last runs (three efficiencies in three
    columns need some 470 px)."""
    legend = plot.plotItem.legend
    room = plot.width() - plot.plotItem.getAxis("left").width() - 16
    n = max(1, min(LEGEND_COLUMNS, len(legend.items)))
    while n > 1:
        legend.setColumnCount(n)
        if legend.layout.effectiveSizeHint(Qt.SizeHint.PreferredSize).width() <= room:
            break
        n -= 1
    legend.setColumnCount(n)


CANCELLED = "cancelled"


class SumsFailed(NamedTuple):
    """The window sums of a run could not be built (a full disk): its name, and why."""

    run: str
    reason: str


def remembered_failure(runs, again: bool = False) -> SumsFailed | None:
    """The first of `runs` whose window-sums build failed before (the run remembers it:
    Experiment.window_sums_failure), unless `again` (asked to try again)."""
    from popview.failures import one_line

    if again:
        return None
    for run in runs:
        failed = getattr(run, "window_sums_failure", None)
        if failed is not None:
            return SumsFailed(run.name, one_line(failed))
    return None


def _build_table(job, unprepared, runs, model, focus, ref, mode, again: bool = False):
    """In the lane: the window sums of `unprepared` built (their progress reported), then the
    table; CANCELLED when the Cancel stopped the build; SumsFailed when a run's could not be
    built (now, or before: a failed build is not tried again unless `again`)."""
    from popview.cache import location
    from popview.cache.progress import Cancelled
    from popview.failures import one_line

    failed = remembered_failure(unprepared, again)
    if failed is not None:
        return failed
    try:
        for i, run in enumerate(unprepared):
            try:
                run.prepare_window_sums(lambda f, m="", i=i: job.progress((i + f) / len(unprepared), m), job.cancel,
                                        again=again)
            except OSError as exc:
                if not location.cannot_build(exc):
                    raise
                return SumsFailed(run.name, one_line(exc))
    except Cancelled:
        return CANCELLED
    return series.build(runs, model, focus, ref, mode)


class ScalingPane(QWidget):
    pane_id = "scaling"
    title = "Scaling"
    updated = Signal()

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.table = None                # the last ScalingTable
        self._runs: list = []            # the runs on show
        self.runner = Lane(self, "Scaling")
        self._entry: JobProgress | None = None     # the window sums being built: progress and Cancel
        self._waiting: str | None = None           # what the status says the table waits for
        compiling.progress().changed.connect(self._compiles_changed)   # first run: "calculating" said more

        self.model_box = QComboBox(self)
        self.reference_box = QComboBox(self)
        self.mode_box = QComboBox(self)
        self.mode_box.addItems(list(series.MODES))
        for box in (self.model_box, self.reference_box):
            # as wide as their choices, which come after the first show: sized then, empty, they cut
            # 'Hybrid additive' to 'Hybrid a' and '1x1  hyb_1x1' to '1x1  hyb' (heat series, Overview);
            # a narrow pane may still shrink them
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.setMinimumWidth(box.fontMetrics().horizontalAdvance("x") * 10)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.linkActivated.connect(self._sums_again)     # "try again": window sums that failed
        self.export_button = QToolButton(self, text="Export", toolTip="Export the table or the plots")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        export_menu = QMenu(self.export_button)
        for text, slot in (("CSV", self.export_csv), ("JSON", self.export_json),
                           ("PNG", self.export_png), ("SVG", self.export_svg)):
            export_menu.addAction(f"Export {text}…", lambda s=slot: s())
        self.export_button.setMenu(export_menu)
        buttons = [self.export_button]      # one button, not four: the pane fits beside others

        self.tree = QTreeWidget(self)
        QShortcut(QKeySequence.Copy, self.tree, self.copy, context=Qt.WidgetShortcut)
        self.tree.setAlternatingRowColors(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setHeaderLabels(["Metric"])       # Qt's default header of an empty table reads "1"
        self.speedup_plot = pg.PlotWidget(self)          # the theme's background and text colours
        self.efficiency_plot = pg.PlotWidget(self)
        for p, title, ylabel in ((self.speedup_plot, "Speedup", "speedup"),
                                 (self.efficiency_plot, "Efficiencies", "efficiency (%)")):
            p.setTitle(title)
            p.setLabel("bottom", "processing elements")
            p.setLabel("left", ylabel)
            p.showGrid(x=True, y=True, alpha=0.25)
            legend_below(p)
            p.installEventFilter(self)      # a new width: as many legend columns as fit

        controls = QHBoxLayout()
        for label, w in (("Model", self.model_box), ("Reference", self.reference_box), ("Scaling", self.mode_box)):
            controls.addWidget(QLabel(label, self))
            controls.addWidget(w)
        controls.addStretch(1)
        for b in buttons:
            controls.addWidget(b)
        for w in (self.tree, self.speedup_plot, self.efficiency_plot):
            w.setMinimumHeight(50)          # a low dock keeps the window within the screen
        self.plots = QSplitter(Qt.Vertical, self)
        self.plots.addWidget(self.speedup_plot)
        self.plots.addWidget(self.efficiency_plot)
        self.plots.installEventFilter(self)     # a new size: stacked or side by side
        self.split = split = QSplitter(Qt.Horizontal, self)
        split.addWidget(self.tree)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([480, 720])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(controls)
        lay.addWidget(self.status)
        self.building = QVBoxLayout()
        lay.addLayout(self.building)
        lay.addWidget(split, 1)

        self.mode_box.setCurrentText(state.scaling)
        for box in (self.model_box, self.reference_box):
            box.currentIndexChanged.connect(self.refresh)
        # strong / weak is the window's one choice (the Advisor follows it too)
        self.mode_box.currentIndexChanged.connect(lambda _i: state.set_scaling(self.mode_box.currentText()))
        state.scalingChanged.connect(self._scaling_changed)
        state.experimentsChanged.connect(self._runs_changed)
        state.currentExperimentChanged.connect(self._runs_changed)
        state.focusChanged.connect(self.refresh)
        palette.setting().changed.connect(self._recolour)
        self._runs_changed()

    # ---- inputs -------------------------------------------------------
    def runs(self) -> list:
        return series_runs(self.state)

    def _runs_changed(self, *_signal_args) -> None:
        runs = self.runs()
        if runs == self._runs and runs:
            return                     # another run of the same series became current
        self._runs = runs
        for box in (self.model_box, self.reference_box):
            box.blockSignals(True)
        current_model = self.model_box.currentData()
        self.model_box.clear()
        if runs:
            keys = []
            for exp in runs:
                for v in variants.applicable(exp):
                    for m in v.models:
                        if m not in keys:
                            keys.append(m)
            for m in keys:
                self.model_box.addItem(_model_label(m), m)
            best = current_model or variants.preferred(runs[-1])[0].models[0]
            self.model_box.setCurrentIndex(max(0, self.model_box.findData(best)))
        self.reference_box.clear()
        for exp in runs:
            self.reference_box.addItem(f"{exp.label}  {exp.name}", exp.label)
        for box in (self.model_box, self.reference_box):
            box.blockSignals(False)
        self.refresh()

    def set_model(self, model: str) -> None:
        self.model_box.setCurrentIndex(max(0, self.model_box.findData(model)))

    def set_reference(self, index: int) -> None:
        self.reference_box.setCurrentIndex(index)

    def set_mode(self, mode: str) -> None:
        self.state.set_scaling(mode)

    def _scaling_changed(self, mode: str) -> None:
        self.mode_box.blockSignals(True)
        self.mode_box.setCurrentText(mode)
        self.mode_box.blockSignals(False)
        self.refresh()

    # ---- computing ----------------------------------------------------
    def refresh(self, *_signal_args, again: bool = False) -> None:
        """The table computed again on the lane; with a time-window or iteration focus the
        window sums of the runs without them built first. A run whose build failed (a full disk:
        the run remembers it, whichever pane or call tried) is not tried again -- every change
        of model, reference or focus built it again, seconds on a large trace, to fail the
        same way -- but said, with a "try again" link (`again`)."""
        runs = self.runs()
        if len(runs) < 2:
            self.table = None
            self.tree.clear()
            self.speedup_plot.clear()
            self.efficiency_plot.clear()
            self.status.setText("Open two or more runs of one application to compare them.")
            self.updated.emit()
            return
        model = self.model_box.currentData()
        ref = max(0, self.reference_box.currentIndex())
        mode = self.state.scaling
        focus = self.state.focus
        self._waiting = "calculating"
        self.status.setText(waiting_text(self._waiting))
        self._drop_entry()
        unprepared = [r for r in runs if not getattr(r, "window_sums_prepared", True)] \
            if focus.kind in WINDOW_FOCI else []
        failed = remembered_failure(unprepared, again)
        if failed is not None:
            self._arrived(failed, None)
            return
        if unprepared:
            # the window sums of the runs without them (popview.cache.window_sums), built first with
            # their progress and Cancel: seconds a run on a large trace
            self._waiting = f"preparing the window sums of {len(unprepared)} run(s)"
            self.status.setText(waiting_text(self._waiting))
            self._entry = JobProgress(self.runner, self, name=f"Window sums of {len(unprepared)} run(s)",
                                      what="building the window sums (nothing is kept)", stop=self._stop)
            self.building.addWidget(self._entry)
            self._entry.show()
        self.runner.submit(lambda job: _build_table(job, unprepared, runs, model, focus, ref, mode, again),
                           self._arrived)

    def _sums_again(self, _link: str = "") -> None:
        self.refresh(again=True)

    def _stop(self) -> None:
        if self.runner.stop():                 # still waiting for its turn: ended now
            self._arrived(CANCELLED, None)

    def _drop_entry(self) -> None:
        if self._entry is not None:
            self.building.removeWidget(self._entry)
            self._entry.hide()
            self._entry.deleteLater()
            self._entry = None

    def _compiles_changed(self) -> None:
        """While the table waits: what the first run's compiles are doing, how far, how long."""
        if self._waiting:
            self.status.setText(waiting_text(self._waiting))

    def _arrived(self, table, error) -> None:
        self._waiting = None
        self._drop_entry()
        if table == CANCELLED:
            self.table = None
            self.tree.clear()
            self.speedup_plot.clear()
            self.efficiency_plot.clear()
            self.status.setText("Not computed: building the window sums this focus reads was cancelled; nothing "
                                "was kept. Choose the focus again to build them.")
        elif isinstance(table, SumsFailed):
            self.table = None
            self.tree.clear()
            self.speedup_plot.clear()
            self.efficiency_plot.clear()
            self.status.setText(f"Not computed: the window sums of {escape(table.run)} (what this focus reads) "
                                f"could not be built: {escape(table.reason)}. "
                                '<a href="again">Try again</a>.')
        elif error is not None:
            self.table = None
            self.tree.clear()
            self.status.setText(f"Could not compute the scaling table: {error.splitlines()[0]}")
        else:
            self.table = table
            name = series_name(self.state)
            self.status.setText((f"Series {name}: " if name else "") +
                                f"{len(table.labels)} runs, reference {table.labels[table.reference]}, "
                                f"focus {table.focus}; {table.mode_reason}")
            self._fill_tree(table)
            self._draw(table)
        self.updated.emit()

    def _recolour(self, _palette: str) -> None:
        if self.table:
            self._fill_tree(self.table)

    # ---- showing ------------------------------------------------------
    def _fill_tree(self, table) -> None:
        self.tree.clear()
        self.tree.setColumnCount(1 + len(table.labels))
        self.tree.setHeaderLabels(["Metric"] + [f"{lab}{' (ref)' if i == table.reference else ''}"
                                                for i, lab in enumerate(table.labels)])
        parents: list[QTreeWidgetItem] = []
        for row in table.rows:
            parents = parents[:row.depth]
            item = QTreeWidgetItem([row.name] + [row.text(i, micro=MICRO) for i in range(len(row.values))])
            item.setToolTip(0, tooltip_html(row.node))
            for c, (v, why) in enumerate(zip(row.values, row.reasons), start=1):
                item.setTextAlignment(c, Qt.AlignRight | Qt.AlignVCenter)
                if v is None:
                    item.setForeground(c, QBrush(QColor(140, 140, 140)))
                    item.setToolTip(c, f"not available: {why}")
                elif c - 1 < len(row.bounds) and row.bounds[c - 1]:
                    item.setToolTip(c, why)          # why it is only an upper bound
                elif row.kind in nodes.RATED_KINDS:
                    rgb = colour(v)
                    item.setBackground(c, QBrush(QColor(*rgb)))
                    item.setForeground(c, QBrush(QColor(text_on(rgb))))
            (parents[-1].addChild(item) if parents else self.tree.addTopLevelItem(item))
            parents.append(item)
        extra = [("Runtime", [nodes.format_seconds(v, micro=MICRO) if v is not None else "n/a" for v in table.runtimes])]
        if table.row("speedup"):
            extra.append(("Ideal speedup", [f"{v:.2f}" for v in table.ideal_speedup()]))
        if table.runtimes:
            for name, texts in extra:
                item = QTreeWidgetItem([name] + texts)
                for c in range(1, len(texts) + 1):
                    item.setTextAlignment(c, Qt.AlignRight | Qt.AlignVCenter)
                self.tree.addTopLevelItem(item)
        self.tree.expandAll()
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        self._fit_table()

    def _fit_table(self) -> None:
        """Widen the table's side so every run's column shows, up to two thirds of the pane."""
        total = sum(self.split.sizes())
        needed = self.tree.header().length() + self.tree.frameWidth() * 2 + 24
        left = self.split.sizes()[0]
        if total > 0 and left < needed:
            left = min(needed, total * 2 // 3)
            self.split.setSizes([left, total - left])

    def _draw(self, table) -> None:
        xs = [float(n) for n in table.elements]
        log = min(xs) > 0 and max(xs) / min(xs) >= 4
        ticks = [[(math.log10(x) if log else x, f"{x:g}") for x in xs]]
        for p in (self.speedup_plot, self.efficiency_plot):
            p.clear()
            p.setLogMode(x=log, y=False)
            p.getAxis("bottom").setTicks(ticks)
        self.speedup_plot.plot(xs, table.ideal_speedup(), pen=pg.mkPen("#555555", width=2, style=Qt.DashLine),
                               name="ideal")
        sp = table.speedup()
        if any(v is not None for v in sp):
            pts = [(x, v) for x, v in zip(xs, sp) if v is not None]
            self.speedup_plot.plot([p[0] for p in pts], [p[1] for p in pts], pen=pg.mkPen("#1f77b4", width=2),
                                   symbol="o", symbolBrush="#1f77b4", name="measured")
        self.efficiency_plot.addItem(pg.InfiniteLine(pos=ACCEPTABLE * 100, angle=0,
                                                     pen=pg.mkPen("#888888", style=Qt.DotLine)))
        for i, row in enumerate(r for r in table.rows if r.depth <= PLOT_DEPTH and r.kind in nodes.RATED_KINDS):
            pts = [(x, v * 100) for x, v in zip(xs, row.values) if v is not None]
            if pts:
                c = PALETTE[i % len(PALETTE)]
                self.efficiency_plot.plot([p[0] for p in pts], [p[1] for p in pts], pen=pg.mkPen(c, width=2),
                                          symbol="o", symbolBrush=c, name=row.name)
        for p in (self.speedup_plot, self.efficiency_plot):
            fit_legend(p)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and obj in (self.speedup_plot, self.efficiency_plot):
            fit_legend(obj)
        elif event.type() == QEvent.Type.Resize and obj is self.plots:
            self._arrange_plots()
        return super().eventFilter(obj, event)

    def _table_width(self) -> int:
        """The width the table needs to show every column whole (at least TABLE_MIN_WIDTH)."""
        scroll = self.tree.verticalScrollBar().sizeHint().width()
        return max(TABLE_MIN_WIDTH, self.tree.header().length() + scroll + 2 * self.tree.frameWidth())

    def _arrange_plots(self) -> None:
        """Stacked plots in a tall pane; side by side, without their titles (the axes name
        them), in a low one: stacked in the Overview's 200 px strip, each plot gave its title,
        axis and legend the room and drew its curves in 0 px. A low pane whose table left the
        plots less than two plots' width gives them that width once, if its table keeps the
        width of its columns (_table_width); else they stay stacked, without their titles
        (heat 1x1-2x2 in the Overview at 1500x920: 390 of 1085 px, curves in 0 px, now 15)."""
        low = self.height() < LOW_PANE
        if not low:
            self._widened = False
        elif not getattr(self, "_widened", False) and self.plots.width() < 2 * PLOT_MIN_WIDTH:
            want = 2 * PLOT_MIN_WIDTH + self.plots.handleWidth()
            total = sum(self.split.sizes())
            if total - want >= self._table_width():
                self._widened = True              # once: the user's own sizes stay
                self.split.setSizes([total - want, want])
        orientation = Qt.Horizontal if low and self.plots.width() >= 2 * PLOT_MIN_WIDTH else Qt.Vertical
        if orientation != self.plots.orientation():
            self.plots.setOrientation(orientation)
            self.plots.setSizes([1, 1])
        for p, title in ((self.speedup_plot, "Speedup"), (self.efficiency_plot, "Efficiencies")):
            p.setTitle(None if low else title)
            p.setLabel("bottom", None if low else "processing elements")

    def copy(self) -> None:
        """Ctrl+C: the table as CSV text."""
        if self.table:
            QApplication.clipboard().setText(self.table.to_csv())

    # ---- export -------------------------------------------------------
    def _ask(self, caption: str, suffix: str) -> Path | None:
        name, _ = QFileDialog.getSaveFileName(self, caption, f"scaling.{suffix}", f"*.{suffix}")
        return Path(name) if name else None

    def export_csv(self, path: Path | None = None) -> None:
        if self.table and (path := path or self._ask("Export table as CSV", "csv")):
            Path(path).write_text(self.table.to_csv(), encoding="utf-8")

    def export_json(self, path: Path | None = None) -> None:
        if self.table and (path := path or self._ask("Export table as JSON", "json")):
            Path(path).write_text(self.table.to_json(), encoding="utf-8")

    def export_png(self, path: Path | None = None) -> None:
        if self.table and (path := path or self._ask("Export plot as PNG", "png")):
            self.grab_plots().save(str(path), "PNG")

    def export_svg(self, path: Path | None = None) -> None:
        """The same plot the report shows, as a standalone SVG file."""
        from popview.analysis.report.html import scaling_svg
        if self.table and (path := path or self._ask("Export plot as SVG", "svg")):
            Path(path).write_text(scaling_svg(self.table), encoding="utf-8")

    def grab_plots(self):
        return self.plots.grab()

    def view_state(self) -> dict:
        return {"model": self.model_box.currentData(), "reference": self.reference_box.currentIndex(),
                "mode": self.mode_box.currentText()}

    def restore_view_state(self, d: dict) -> None:
        if d.get("model"):
            self.model_box.setCurrentIndex(max(0, self.model_box.findData(d["model"])))
        if d.get("mode") in series.MODES:
            self.mode_box.setCurrentText(d["mode"])
        if isinstance(d.get("reference"), int) and 0 <= d["reference"] < self.reference_box.count():
            self.reference_box.setCurrentIndex(d["reference"])


def _model_label(model: str) -> str:
    for v in variants.VARIANTS:
        if v.models == (model,):
            return v.label
    return {"computation": "Computation", "io": "I/O"}.get(model, model)



