"""A Paraver view (.cfg) opened on the current run: its timelines and its histograms.

File > Open Paraver view (.cfg)... or a .cfg dropped on the window with a trace open makes
one pane per cfg (a dock beside the Histograms). Each timeline window the cfg shows (the
ones it opens; when it opens none, the ones no other window derives from) is a tab named as
the window: popview's timeline view (zoom, pan, rows, communication lines) drawing the
window's values with the cfg's colours (code colours, or a gradient over the cfg's range)
and draw mode, from the evaluated intervals or their pyramid (analysis/cfg/timeline.py).
Each histogram popview's cfg engine evaluates is a tab named as in the cfg, its table shown
with the Histograms pane's table model; what the engine does not evaluate is listed with the
reason. The cfg is read and evaluated through the pane's Lane, never on the GUI thread.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton,
                               QTableView,
                               QTabWidget, QVBoxLayout, QWidget)

from popview.analysis import histograms
from popview.analysis.cfg import CfgError, read_cfg
from popview.analysis.cfg.evaluate import PERCENT_STATISTICS, NotEvaluated, TraceColumns, evaluate_window, on_threads
from popview.analysis.cfg.timeline import (ABOVE_OUTLIER, BACKGROUND, BELOW_OUTLIER, GRADIENT_BEGIN, GRADIENT_END,
                                           CfgTimeline, CfgTimelineData, code_colour, shown_windows,
                                           window_timeline)
from popview.cache import location
from popview.failures import one_line
from popview.analysis.cfg.paramedir import UNIT_NS, evaluate_cfg, row_labels, value_names
from popview.gui.histograms import TableModel
from popview.gui.jobs import Lane
from popview.gui.timeline.palette import Palette
from popview.gui.timeline.pane import info_html, swatch
from popview.gui.timeline.view import OFF, ON, TimelineView


@dataclass
class Evaluated:
    """What the pool hands back: a Table per evaluated histogram, and (name, why) for the others."""
    cfg: str
    run: str
    tables: list[tuple[str, str, histograms.Table]] = field(default_factory=list)   # name, caption, table
    skipped: list[tuple[str, str]] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)
    timelines: list[CfgTimeline] = field(default_factory=list)
    timelines_skipped: list[tuple[str, str]] = field(default_factory=list)   # window name, why
    planes: dict[int, tuple[list, int]] = field(default_factory=dict)   # 3D: table index -> ([(label, Table)], shown)
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
                       skipped=[(s.name, s.reason) for s in skipped if view.histograms])
    for window in shown_windows(view):
        try:
            timeline = on_threads(evaluate_window(view, window.position, trace), window, trace)
        except (NotEvaluated, KeyError) as exc:
            reason, prefix = one_line(exc), f"window {window.position} {window.name!r}: "
            result.timelines_skipped.append((window.name, reason[len(prefix):] if reason.startswith(prefix) else reason))
            continue
        result.timelines.append(window_timeline(view, window, timeline, trace.t_end,
                                                value_names(window, exp.definitions), exp.definitions))
    if result.timelines and getattr(exp, "prepare_timeline", None) is not None:
        try:
            exp.prepare_timeline()      # the tabs' lines and point info read the run's overview: ready here, in the pool
        except OSError as exc:          # cannot be built (a full disk): the tabs have no lines nor point info
            if not location.cannot_build(exc):
                raise
    for t in tables:
        stat = t.statistic or "value"
        values, unit = t.values, ""
        if t.unit:                              # back to ns: the table model shows durations itself
            values, unit = t.values * UNIT_NS.get(t.unit, 1.0), "ns"
        elif stat in PERCENT_STATISTICS:
            unit = "%"
        caption = (f"control window <b>{html.escape(t.window)}</b> · statistic <b>{html.escape(stat)}</b>"
                   + (f" · cfg units {html.escape(t.unit)}" if t.unit else ""))

        def table_of(v):
            return histograms.Table(kind="cfg", title=t.name, row_labels=t.row_labels, col_labels=t.col_labels,
                                    stats={stat: v}, units={stat: unit}, t0=0, t1=int(trace.t_end),
                                    col_keys=np.arange(len(t.col_labels)), row_keys=np.arange(len(t.row_labels)))
        if t.plane_labels is None:
            result.tables.append((t.name, caption, table_of(values)))
            continue
        if not t.plane_labels:
            result.skipped.append((t.name, "no plane has values"))
            continue
        planes = [(label, table_of(v)) for label, v in zip(t.plane_labels, values)]
        result.planes[len(result.tables)] = (planes, t.plane_shown)
        result.tables.append((t.name, caption + f" · {len(planes)} planes with values", planes[t.plane_shown][1]))
    return result


GRADIENT_SLOTS = 252          # LUT 2..253: the gradient; 0 no value, 1 zero (null gradient), 254/255 outliers


class CfgPalette(Palette):
    """A cfg window's colours as one uint8 LUT: Paraver's code colours of the values present
    (the trace's .pcf state colours where it has them, as Paraver loads them), or
    Paraver's gradient (green to blue) over the window's range with its outlier colours."""

    def __init__(self, data, mode):
        self.data, self.mode = data, mode
        self.cfg: CfgTimeline = data.cfg
        self.lut = np.zeros((256, 3), np.uint8)
        self.labels: dict[int, str] = {}
        self.lut[0] = BACKGROUND
        if mode.categorical:
            self.keys = self.cfg.values_present(254)
            self.lut[255] = (90, 90, 90)
            self.labels[255] = "others"
            states = data.defs.states          # the .pcf's STATES_COLOR: Paraver's code palette for the trace
            for slot, key in enumerate(self.keys, start=1):
                pcf = states.get(int(key), {}) if float(key).is_integer() else {}
                self.lut[slot] = tuple(pcf["color"]) if isinstance(pcf, dict) and pcf.get("color") else code_colour(key)
                self.labels[slot] = self.cfg.label(float(key))
            return
        c = self.cfg.colouring
        self.low, self.high = c.low, c.high
        self.lut[1] = BACKGROUND
        f = np.linspace(0.0, 1.0, GRADIENT_SLOTS)[:, None]
        self.lut[2:2 + GRADIENT_SLOTS] = np.round(np.array(GRADIENT_BEGIN) * (1 - f) + np.array(GRADIENT_END) * f)
        self.lut[254], self.lut[255] = BELOW_OUTLIER, ABOVE_OUTLIER
        self.labels.update({1: "zero", 254: "below the range", 255: "above the range"})

    def index(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros(values.shape, np.uint8)
        ok = np.isfinite(values)
        if self.mode.categorical:
            if len(self.keys) == 0:
                out[ok] = 255
                return out
            pos = np.clip(np.searchsorted(self.keys, values), 0, len(self.keys) - 1)
            found = ok & (self.keys[pos] == values)
            out[found] = (pos[found] + 1).astype(np.uint8)
            out[ok & ~found] = 255
            return out
        c = self.cfg.colouring
        with np.errstate(invalid="ignore", divide="ignore"):
            norm = np.clip((values - self.low) / (self.high - self.low), 0.0, 1.0)
            if c.function == "gradient_function_steps":          # Paraver's Normalizer, 10 steps
                norm = np.floor(10 * norm) / 10
            elif c.function == "gradient_function_log":
                norm = np.log(norm * 100 + 1) / np.log(101)
            elif c.function == "gradient_function_exp":
                norm = np.exp(norm * 10) / np.exp(10)
        out[ok] = (2 + np.round(np.nan_to_num(norm[ok]) * (GRADIENT_SLOTS - 1))).astype(np.uint8)
        out[ok & (values < self.low)] = 254
        out[ok & (values > self.high)] = 255
        if c.null_gradient:
            out[ok & (values == 0)] = 1
        return out


class CfgTimelineTab(QWidget):
    """One cfg timeline window: its name and what it computes, the timeline, its colours."""

    def __init__(self, exp, timeline: CfgTimeline, parent=None):
        super().__init__(parent)
        self.timeline = timeline
        data = CfgTimelineData(exp, timeline)
        self.view = TimelineView(exp, data=data, mode=data.mode, palette=CfgPalette)
        self.view.comms = ON if timeline.comm_lines else OFF     # as the cfg has them
        if timeline.initial is not None:                          # the cfg's time window
            self.view.set_window(*timeline.initial)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self.title = QLabel(self._title_html())
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        self.fit_button = QPushButton("Fit scale", toolTip="Scale the gradient to the values shown "
                                      "(Paraver's fit semantic scale)")
        self.fit_button.clicked.connect(self.fit_scale)
        self.fit_button.setVisible(not timeline.colouring.code)
        top.addWidget(self.fit_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        row = QHBoxLayout()
        row.addWidget(self.view, 1)
        self.legend = QListWidget()
        self.legend.setIconSize(QSize(14, 14))
        self.legend.setFixedWidth(190)
        row.addWidget(self.legend)
        layout.addLayout(row, 1)
        self.info = QLabel()
        self.info.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.info)
        self.view.drawn.connect(self._fill_legend)
        self.view.hovered.connect(lambda info: self.info.setText(info_html(info) if info else ""))

    def fit_scale(self) -> None:
        view = self.view
        if self.timeline.colouring.code or view.last_picture is None:
            return
        view.palette.fit(view.last_picture.values)
        self.title.setText(self._title_html())
        view.redraw_now()

    def colour_range(self) -> tuple[float, float] | None:
        """The gradient's range (None in code colours)."""
        return None if self.timeline.colouring.code else (self.view.palette.low, self.view.palette.high)

    def _title_html(self) -> str:
        t, c = self.timeline, self.timeline.colouring
        if c.code:
            colours = "code colours"
        else:
            kind = "null gradient" if c.null_gradient else "gradient"
            where = "the cfg's range" if c.from_cfg else "range of the values"
            low, high = (self.view.palette.low, self.view.palette.high) if hasattr(self, "view") else (c.low, c.high)
            if (low, high) != (c.low, c.high):
                where = f"fitted to the values shown; the cfg's: {c.low:.6g} – {c.high:.6g}"
            colours = f"{kind} {low:.6g} – {high:.6g} ({where})"
        unit = f" · values in {t.unit.lower()}" if t.unit else ""
        notes = "".join(f" · {html.escape(n)}" for n in t.notes)
        return (f"<b>{html.escape(t.name)}</b>: {html.escape(t.description)}<br>"
                f"<span style='color: gray'>{colours} · {html.escape(t.draw_mode.replace('_', ' '))}{unit}{notes}"
                "</span>")

    def _fill_legend(self) -> None:
        view = self.view
        self.legend.clear()
        if view.last_index is None:
            return
        if self.timeline.colouring.code:
            for colour, label, fraction in view.palette.legend(view.last_index):
                self.legend.addItem(QListWidgetItem(QIcon(swatch(QColor(*colour))), f"{label}  {fraction:.0%}"))
            return
        p, c = view.palette, self.timeline.colouring
        entries = [(p.lut[2], f"{p.low:.4g}"), (p.lut[2 + GRADIENT_SLOTS - 1], f"{p.high:.4g}"),
                   (p.lut[255], f"> {p.high:.4g}"), (p.lut[254], f"< {p.low:.4g}"),
                   (p.lut[0], "no value" + (" or zero" if c.null_gradient else ""))]
        for colour, label in entries:
            self.legend.addItem(QListWidgetItem(QIcon(swatch(QColor(*(int(x) for x in colour)))), label))


class CfgViewPane(QWidget):
    """One cfg on one run. `failed(message, details)`: nothing of it could be evaluated (the
    cfg cannot be read or is no Paraver view, or the run cannot evaluate it); the one-line
    message names the cfg and why, and the window reports it as other inputs it cannot open."""

    failed = Signal(str, str)           # message, details

    def __init__(self, state, path: Path, exp, parent=None):
        super().__init__(parent)
        self.state, self.path, self.exp = state, Path(path), exp
        self.result: Evaluated | None = None
        self.error: str | None = None
        self.timeline_tabs: list[CfgTimelineTab] = []
        self.lane = Lane(self, "Paraver view")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.header = QLabel(f"<b>{html.escape(self.path.name)}</b> on {html.escape(exp.name)}: evaluating…")
        self.header.setWordWrap(True)
        self.save_button = QPushButton("Save as cfg…", toolTip="Write this view's windows and histograms back as "
                                       "a Paraver cfg (version 3.4) that Paraver and paramedir load")
        self.save_button.clicked.connect(self._save_dialog)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.not_evaluated = QLabel()
        self.not_evaluated.setWordWrap(True)
        self.not_evaluated.setTextFormat(Qt.TextFormat.RichText)
        self.not_evaluated.hide()
        layout.addWidget(self.not_evaluated)
        state.experimentsChanged.connect(self._experiments_changed)

    def start(self) -> None:
        """Evaluate the cfg on the run, in the pane's lane (once `failed` has its listener)."""
        self.lane.submit(lambda: evaluate(self.path, self.exp), self._show)

    def save_cfg(self, path) -> str | None:
        """This view's cfg written back at `path` (its windows and histograms as popview read
        them, in the layout Paraver writes: analysis.cfg.writer); None, or why not."""
        from popview.gui.widgets.cfgpath import save_or_reason

        reason = save_or_reason(lambda: read_cfg(self.path), path)
        self.header.setToolTip(f"saved as {Path(path)}" if reason is None else f"{Path(path).name} not saved: {reason}")
        return reason

    def _save_dialog(self) -> None:
        from popview.gui.widgets.cfgpath import ask_cfg_path

        path = ask_cfg_path(self, "Save Paraver view as cfg", self.path.name)
        if path is not None:
            self.save_cfg(path)

    def _experiments_changed(self) -> None:
        """The run closed: its timelines stop (they read its cache on hover) and the pane goes."""
        if self.exp in self.state.experiments:
            return
        self.state.experimentsChanged.disconnect(self._experiments_changed)
        for tab in self.timeline_tabs:
            tab.view.shutdown()
        dock = self.parent()
        if dock is not None and hasattr(dock, "close"):
            dock.close()

    def _show(self, result, error) -> None:
        if error is None and result.error:
            error = result.error
        if error is not None:
            self.error = str(error)
            self.header.setText(f"<b>{html.escape(self.path.name)}</b> on {html.escape(self.exp.name)}: "
                                f"not opened: {html.escape(self.error)}")
            first = self.error.splitlines()[0] if self.error.strip() else "no details"
            message = first if self.path.name in first else f"{self.path}: {first}"
            self.failed.emit(f"Paraver view not opened on {self.exp.name}: {message}", self.error)
            return
        self.result = result
        n, total = len(result.tables), len(result.tables) + len(result.skipped)
        shown = len(result.timelines) + len(result.timelines_skipped)
        windows = ", ".join(html.escape(w) for w in result.windows)
        parts = ([f"{len(result.timelines)} of {shown} timeline{'s' if shown != 1 else ''}"] if shown else []) + \
            ([f"{n} of {total} histogram{'s' if total != 1 else ''}"] if total else [])
        self.header.setText(f"<b>{html.escape(result.cfg)}</b> on {html.escape(result.run)}: "
                            f"{' and '.join(parts) or 'nothing'} evaluated"
                            + (f" · windows: {windows}" if windows else ""))
        for timeline in result.timelines:
            tab = CfgTimelineTab(self.exp, timeline)
            self.timeline_tabs.append(tab)
            self.tabs.addTab(tab, timeline.name)
        for index, (name, caption, table) in enumerate(result.tables):
            page = QWidget()
            box = QVBoxLayout(page)
            box.setContentsMargins(0, 4, 0, 0)
            label = QLabel(caption)
            box.addWidget(label)
            view = QTableView()
            model = TableModel(view)
            model.set_table(table, next(iter(table.stats)))
            view.setModel(model)
            if index in result.planes:          # 3D: the plane shown, chosen as in Paraver's plane box
                planes, shown = result.planes[index]
                chooser = QComboBox(toolTip="The 3D histogram's plane (a value range of its 3D control window)")
                chooser.addItems([plane_label for plane_label, _ in planes])
                chooser.setCurrentIndex(shown)
                chooser.currentIndexChanged.connect(
                    lambda i, m=model, p=planes: m.set_table(p[i][1], next(iter(p[i][1].stats))))
                box.addWidget(chooser)
                page.plane_box = chooser
            view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            box.addWidget(view, 1)
            self.tabs.addTab(page, name)
        if result.skipped or result.timelines_skipped:
            items = "".join(f"<li><b>{html.escape(name)}</b> (timeline): {html.escape(why)}</li>"
                            for name, why in result.timelines_skipped)
            items += "".join(f"<li><b>{html.escape(name)}</b>: {html.escape(why)}</li>" for name, why in result.skipped)
            self.not_evaluated.setText(f"Not evaluated by popview:<ul style='margin:0'>{items}</ul>")
            self.not_evaluated.show()
        if not result.tables and not result.timelines:
            self.tabs.hide()
