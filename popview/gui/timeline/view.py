"""One experiment's timeline: an indexed image (uint8 + LUT) of the visible
window, overlays, and the mouse and keyboard interactions.

Mouse: wheel zooms time at the cursor (Ctrl+wheel zooms rows), left drag
pans, right drag (or Ctrl+left drag) zooms to the dragged range, Shift+left
drag selects a time window (it becomes the focus of analysis), a click
selects the row's location. Keys: Left/Right pan, +/- zoom, Home fits,
Alt+Left / Alt+Right go back / forward in the zoom history.
"""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetrics
from PySide6.QtWidgets import QMenu

from popview.analysis.timeline_data import FLAG_ROWS, IDLE_GAP, MESSAGE_BUDGET, ColourMode, TimelineData
from popview.gui.timeline.palette import Palette
from popview.gui.timeline.rows import RowLayout
from popview.gui.widgets.units import MICRO, format_value

ZOOM_STEP = 1.25
MIN_WINDOW_NS = 100
AUTO, ON, OFF = "auto", "on", "off"       # communication lines: by zoom, always, never
AUTO_LINES = 2000
AUTO_PX_PER_LINE = 6
"""Automatic communication lines are drawn when the window holds few messages: at most
one per AUTO_PX_PER_LINE pixel columns of the view and AUTO_LINES in all (zoomed in far
enough to tell them apart); hidden beyond (400 lines over a 400 px view of a 2x2 hybrid
run striped every row they crossed in the line colour)."""


def format_time(ns: float) -> str:
    return format_value(ns / 1e9, "s")


_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, MICRO), (1.0, "ns"))


def tick_labels(values, spacing: float, top: float | None = None) -> list[str]:
    """Tick times (ns) in one unit, that of `top` (the axis's largest time; the largest tick
    when not given), with as many decimals as the spacing needs and no trailing zeros:
    4.0001 s, 4.0002 s rather than 4 s, 4 s; and a time prints the same whatever the spacing
    of its ticks: two stacked runs ticked "1 s" and "1.0 s" (ticks of 1 s and of 0.5 s), and a
    run's minor ticks could be in ms beside its major ticks in s."""
    if top is None:
        top = max((abs(v) for v in values), default=0.0)
    scale, unit = next(((f, u) for f, u in _UNITS if abs(top) >= f), _UNITS[-1])
    step = spacing / scale if spacing > 0 else 1.0
    decimals = min(max(0, int(np.ceil(-np.log10(step) - 1e-9))), 9)

    def one(v: float) -> str:
        text = f"{v / scale:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return [f"{one(v)} {unit}" for v in values]


class TimeAxis(pg.AxisItem):
    """Time in readable units (the view's x is in ns), one unit for the axis's every tick."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
        return tick_labels(values, spacing, max(abs(self.range[0]), abs(self.range[1])))


class RowAxis(pg.AxisItem):
    """Row labels at row centres; thinned out when rows are dense."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.labels: list[str] = []

    def tickValues(self, minVal, maxVal, size):  # noqa: N802,N803 - pyqtgraph override
        n = len(self.labels)
        minVal, maxVal = sorted((minVal, maxVal))     # the row axis is inverted  # noqa: N806
        lo, hi = max(int(np.floor(minVal)), 0), min(int(np.ceil(maxVal)), n)
        if hi <= lo:
            return []
        step = max(1, int(np.ceil((hi - lo) * 14 / max(size, 1))))
        return [(1.0, [r + 0.5 for r in range(lo, hi, step)])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
        return [self.labels[int(v)] if 0 <= int(v) < len(self.labels) else "" for v in values]


class TimelineViewBox(pg.ViewBox):
    """Time zoom/pan, rubber-band zoom and Shift-drag selection."""

    def __init__(self, view: "TimelineView"):
        super().__init__(invertY=True, enableMenu=False)
        self.view = view
        self.setMouseEnabled(x=True, y=False)
        self._select = pg.LinearRegionItem(brush=pg.mkBrush(80, 140, 255, 60), movable=False)
        self._select.setZValue(50)
        self._select.hide()
        self.addItem(self._select, ignoreBounds=True)

    def wheelEvent(self, ev, axis=None):  # noqa: N802 - Qt override
        delta = ev.delta() if hasattr(ev, "delta") else ev.angleDelta().y()
        factor = ZOOM_STEP ** (-np.sign(delta)) if delta else 1.0
        center = self.mapToView(ev.pos())
        if ev.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.view.zoom_rows(factor, center.y())
        else:
            self.view.zoom(factor, center.x(), record=False)
            self.view.record_soon()
        ev.accept()

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802 - pyqtgraph override
        mods = ev.modifiers()
        left = ev.button() == Qt.MouseButton.LeftButton
        start, now = self.mapToView(ev.buttonDownPos()), self.mapToView(ev.pos())
        if left and mods & Qt.KeyboardModifier.ShiftModifier:
            ev.accept()
            a, b = sorted((start.x(), now.x()))
            self._select.setRegion((a, b))
            self._select.show()
            if ev.isFinish():
                self._select.hide()
                self.view.select_window(a, b)
            return
        if ev.button() == Qt.MouseButton.RightButton or (left and mods & Qt.KeyboardModifier.ControlModifier):
            ev.accept()
            if ev.isFinish():
                self.rbScaleBox.hide()
                a, b = sorted((start.x(), now.x()))
                if b - a > 0:
                    self.view.set_window(a, b)
            else:
                self.updateScaleBox(ev.buttonDownPos(), ev.pos())
            return
        if left:
            ev.accept()
            last = self.mapToView(ev.lastPos())
            dx, dy = last.x() - now.x(), last.y() - now.y()
            self.view.pan(dx, dy)
            if ev.isFinish():
                self.view.record()
            return
        ev.ignore()

    def mouseClickEvent(self, ev):  # noqa: N802 - pyqtgraph override
        p = self.mapToView(ev.pos())
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.view.clicked(p.x(), p.y())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self.view.context_menu(p.y(), ev.screenPos().toPoint())
        else:
            ev.ignore()


class TimelineView(pg.PlotWidget):
    """The timeline of one experiment."""

    hovered = Signal(object)          # info dict (or None)
    windowSelected = Signal(object, object)
    locationClicked = Signal(int)
    drawn = Signal()

    def __init__(self, exp, parent=None, data=None, mode: ColourMode | None = None, palette=Palette):
        """`data` (default: the experiment's TimelineData), its colour `mode` and the `palette`
        class colouring it: a Paraver view's timeline brings its own (gui/cfgviews.py)."""
        self.vb = TimelineViewBox(self)
        self.time_axis = TimeAxis("bottom")
        self.row_axis = RowAxis("left")
        super().__init__(parent, viewBox=self.vb, axisItems={"bottom": self.time_axis, "left": self.row_axis})
        self.exp = exp
        self.data = data if data is not None else TimelineData(exp)
        self.layout_rows = RowLayout(exp.definitions)
        self.mode = mode or ColourMode("state", label="State")
        self.palette_class = palette
        self.palette = palette(self.data, self.mode)
        self.comms = AUTO               # AUTO, ON or OFF: see AUTO_LINES
        self.lines_shown = False        # whether the last drawing has communication lines on
        self.show_flags = False
        self.critical_path = None
        self.critical_path_error: str | None = None     # why the replay gave no path
        self.last_picture = None
        self.last_index = None
        self.last_rows = np.zeros(0, np.int64)
        self.overlay_notes: list[str] = []     # why an overlay is not (fully) drawn
        self.last_redraw_ms = 0.0
        self.history: list[tuple[int, int]] = []
        self.history_pos = -1
        self._closed = False
        self.setBackground(pg.getConfigOption("background"))    # the theme's, light or dark
        self.plotItem.setClipToView(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.addItem(self.image)
        self.lines = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(255, 235, 0, 220, width=1))
        self.flags = pg.ScatterPlotItem(symbol="t1", size=7, pen=pg.mkPen(None), brush=pg.mkBrush(40, 160, 40))
        self.path = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(230, 0, 200, 230, width=3))
        self.path_route = pg.PlotDataItem(connect="finite", pen=pg.mkPen(230, 0, 200, 200, width=1))
        self.focus_region = pg.LinearRegionItem(brush=pg.mkBrush(255, 200, 0, 55), pen=pg.mkPen(200, 140, 0),
                                                movable=False)
        self.row_band = pg.LinearRegionItem(orientation="horizontal", brush=pg.mkBrush(0, 120, 255, 40),
                                            pen=pg.mkPen(None), movable=False)
        self.annotations: list = []
        self.highlight = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(255, 255, 0, 255, width=4))
        for item, z in ((self.lines, 10), (self.flags, 11), (self.path_route, 12), (self.path, 12), (self.highlight, 13),
                        (self.focus_region, 5), (self.row_band, 6)):
            item.setZValue(z)
            self.addItem(item, ignoreBounds=True)
        self.focus_region.hide()
        self.row_band.hide()
        self._mark_trace_end()
        self._redraw_timer = QTimer(self, singleShot=True, interval=0, timeout=self.redraw_now)
        self._record_timer = QTimer(self, singleShot=True, interval=400, timeout=self.record)
        self._hover_timer = QTimer(self, singleShot=True, interval=60, timeout=self._hover_now)
        self._hover_at: tuple[float, float] | None = None
        self.vb.sigRangeChanged.connect(lambda *_: self._redraw_timer.start())
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._apply_rows()
        self.fit()

    def _mark_trace_end(self) -> None:
        """A trace cut short (flags["truncated"]): the time after its last record hatched grey
        and said to be unrecorded, not drawn as its threads' idle time (heat 1x2 cut at 50 %
        of its bytes: the worker 'Idle (OpenMP worker waiting)' from 879 ms to 1.457 s)."""
        self.trace_end = None
        end, t_end = getattr(self.data, "recorded_end", None), getattr(self.data, "t_end", None)
        if end is None or t_end is None or end >= t_end:
            return
        text = f"trace ends here (truncated):\nno record after {format_time(end)}"
        region = pg.LinearRegionItem((end, t_end), brush=QBrush(QColor(128, 128, 128, 120), Qt.BrushStyle.BDiagPattern),
                                     pen=pg.mkPen(110, 110, 110, width=2), movable=False)
        region.setZValue(7)
        region.setToolTip(text)
        self.addItem(region, ignoreBounds=True)
        label = pg.TextItem(text, color=(90, 90, 90), anchor=(0, 0), fill=pg.mkBrush(255, 255, 255, 200))
        label.setPos(end, 0)
        label.setZValue(20)
        self.addItem(label, ignoreBounds=True)
        self.trace_end = (end, region, label)

    def shutdown(self) -> None:
        """Stop every pending redraw: the experiment is about to close."""
        for timer in (self._redraw_timer, self._record_timer, self._hover_timer):
            timer.stop()
        self.vb.sigRangeChanged.disconnect()
        self._closed = True

    # ---- window ---------------------------------------------------------------
    def window(self) -> tuple[int, int]:
        (a, b), _ = self.vb.viewRange()
        return int(a), int(b)

    def set_window(self, t0: float, t1: float, record: bool = True) -> None:
        t0, t1 = float(t0), float(t1)
        if t1 - t0 < MIN_WINDOW_NS:
            mid = (t0 + t1) / 2
            t0, t1 = mid - MIN_WINDOW_NS / 2, mid + MIN_WINDOW_NS / 2
        self.vb.setXRange(t0, t1, padding=0)
        if record:
            self.record()

    def fit(self) -> None:
        self.set_window(0, self.data.t_end)

    def zoom(self, factor: float, center: float | None = None, record: bool = True) -> None:
        t0, t1 = self.window()
        c = (t0 + t1) / 2 if center is None else center
        self.set_window(c - (c - t0) * factor, c + (t1 - c) * factor, record)

    def pan(self, dt: float, drow: float = 0.0) -> None:
        t0, t1 = self.window()
        self.vb.setXRange(t0 + dt, t1 + dt, padding=0)
        if drow:
            (_, _), (r0, r1) = self.vb.viewRange()
            self.vb.setYRange(r0 + drow, r1 + drow, padding=0)

    def pan_fraction(self, fraction: float) -> None:
        t0, t1 = self.window()
        self.pan((t1 - t0) * fraction)
        self.record()

    def zoom_rows(self, factor: float, center: float) -> None:
        (_, _), (r0, r1) = self.vb.viewRange()
        n = len(self.layout_rows)
        span = min(max((r1 - r0) * factor, 1.0), n)
        a = min(max(center - (center - r0) * factor, 0.0), n - span)
        self.vb.setYRange(a, a + span, padding=0)

    def go_to(self, t0: int, t1: int | None = None) -> None:
        """Centre on t0 keeping the zoom, or show [t0, t1]."""
        if t1 is not None:
            self.set_window(t0, t1)
            return
        a, b = self.window()
        half = (b - a) / 2
        self.set_window(t0 - half, t0 + half)

    # ---- history ---------------------------------------------------------------------
    def record(self) -> None:
        self._record_timer.stop()
        w = self.window()
        if self.history_pos >= 0 and self.history[self.history_pos] == w:
            return
        del self.history[self.history_pos + 1:]
        self.history.append(w)
        self.history_pos = len(self.history) - 1

    def record_soon(self) -> None:
        self._record_timer.start()

    def can_go_back(self) -> bool:
        return self.history_pos > 0

    def can_go_forward(self) -> bool:
        return self.history_pos < len(self.history) - 1

    def back(self) -> None:
        self.record()
        if self.can_go_back():
            self.history_pos -= 1
            self.set_window(*self.history[self.history_pos], record=False)

    def forward(self) -> None:
        if self.can_go_forward():
            self.history_pos += 1
            self.set_window(*self.history[self.history_pos], record=False)

    # ---- rows and modes ---------------------------------------------------------------
    def set_grouping(self, grouping: str) -> None:
        self.layout_rows.set_grouping(grouping)
        self._apply_rows()

    def toggle_group_at(self, row: int) -> None:
        if 0 <= row < len(self.layout_rows):
            self._toggle(self.layout_rows.rows[row].group)

    def _apply_rows(self) -> None:
        self.row_axis.labels = [r.label for r in self.layout_rows.rows]
        metrics = QFontMetrics(self.row_axis.style.get("tickFont") or self.font())
        widest = max((metrics.horizontalAdvance(label) for label in self.row_axis.labels), default=40)
        self.row_axis.setWidth(min(widest + 24, 360))
        self.vb.setLimits(yMin=0, yMax=max(len(self.layout_rows), 1))
        self.vb.setYRange(0, max(len(self.layout_rows), 1), padding=0)
        self.row_axis.picture = None
        self.row_axis.update()
        self._redraw_timer.start()

    def set_mode(self, mode: ColourMode) -> None:
        self.mode = mode
        self.palette = self.palette_class(self.data, mode)
        self._redraw_timer.start()

    # ---- drawing -------------------------------------------------------------------------
    def visible_rows(self) -> tuple[int, int]:
        (_, _), (r0, r1) = self.vb.viewRange()
        n = len(self.layout_rows)
        return max(int(np.floor(r0)), 0), min(int(np.ceil(r1)), n)

    def sampled_rows(self, r0: int, r1: int) -> np.ndarray:
        """The rows to compute: all of [r0, r1), or one per pixel line when there are more
        rows than lines (the screen cannot show more)."""
        lines = max(int(self.vb.height()), 1)
        if r1 - r0 <= lines:
            return np.arange(r0, r1)
        return r0 + ((np.arange(lines) + 0.5) * (r1 - r0) / lines).astype(np.int64)

    def redraw_now(self) -> None:
        """Recompute the image of the visible window (and the overlays)."""
        self._redraw_timer.stop()
        if self._closed:
            return
        start = time.perf_counter()
        t0, t1 = self.window()
        width = max(int(self.vb.width()), 1)
        r0, r1 = self.visible_rows()
        if r1 <= r0 or t1 <= t0:
            self.image.clear()
            return
        shown = self.sampled_rows(r0, r1)
        pic = self.data.picture(self.mode, self.layout_rows.locs[shown], t0, t1, width)
        index = self.palette.index(pic.values)
        self.image.setImage(index, lut=self.palette.lut, levels=(0, 255), autoLevels=False)
        self.image.setRect(QRectF(pic.t0, r0, pic.t1 - pic.t0, r1 - r0))
        self.last_picture, self.last_index, self.last_rows = pic, index, shown
        rows = self.layout_rows.locs[r0:r1]
        self.overlay_notes = []
        self._draw_lines(rows, t0, t1)
        self._draw_flags(rows, t0, t1)
        self.last_redraw_ms = (time.perf_counter() - start) * 1e3
        self.drawn.emit()

    @property
    def show_lines(self) -> bool:
        """Communication lines on (asked for, or automatically at this zoom)."""
        return self.lines_shown

    @show_lines.setter
    def show_lines(self, on: bool) -> None:
        self.comms = ON if on else OFF

    def auto_lines(self) -> int:
        """At most this many messages in the window turn automatic lines on."""
        return min(AUTO_LINES, max(int(self.vb.width()) // AUTO_PX_PER_LINE, 1))

    def _draw_lines(self, rows, t0, t1) -> None:
        auto = self.comms == AUTO
        lines = None if self.comms == OFF else self.data.lines(rows, t0, t1, limit=self.auto_lines() if auto else
                                                                MESSAGE_BUDGET)
        few = lines is not None and not lines.truncated
        if self.comms == ON and self.data.reader.has("messages") and not few:
            self.overlay_notes.append("too many messages to draw them all: zoom in")
        self.lines_shown = self.comms == ON or (auto and few)
        if not self.lines_shown or lines is None or len(lines.send_loc) == 0:
            self.lines.setData([], [])
            return
        ys = self.layout_rows.row_of[lines.send_loc]
        yr = self.layout_rows.row_of[lines.recv_loc]
        keep = (ys >= 0) & (yr >= 0) & (ys != yr)
        x = np.empty(2 * keep.sum())
        y = np.empty_like(x)
        x[0::2], x[1::2] = lines.send_time[keep], lines.recv_time[keep]
        y[0::2], y[1::2] = ys[keep] + 0.5, yr[keep] + 0.5
        self.lines.setData(x, y)

    def _draw_flags(self, rows, t0, t1) -> None:
        flags = self.data.flags(rows, t0, t1) if self.show_flags else None
        if self.show_flags and (flags is None or flags.truncated):
            self.overlay_notes.append(f"flags need at most {FLAG_ROWS} rows and fewer events: zoom in")
        if flags is None or len(flags.loc) == 0:
            self.flags.setData([], [])
            return
        y = self.layout_rows.row_of[flags.loc]
        keep = y >= 0
        self.flags.setData(flags.time[keep].astype(float), y[keep] + 0.2)

    def set_critical_path(self, path: dict | None) -> None:
        """The path in time order: a thin line along all of it (its jumps between
        rows are the dependencies), thick where it runs on a location's own work;
        the pieces where it waits for a dependency stay thin."""
        self.critical_path = path
        if not path or len(path.get("loc", ())) == 0:
            self.path.setData([], [])
            self.path_route.setData([], [])
            return
        rows = self.layout_rows.row_of[np.asarray(path["loc"], np.int64)].astype(np.float64) + 0.5
        rows[rows < 0.5] = np.nan                     # a location without a row breaks the line
        x = np.empty(2 * len(rows))
        x[0::2], x[1::2] = path["begin"], path["end"]
        y = np.repeat(rows, 2)
        self.path_route.setData(x, y)
        own = ~np.asarray(path.get("waiting", np.zeros(len(rows), bool)), bool) & np.isfinite(rows)
        self.path.setData(x.reshape(-1, 2)[own].ravel(), y.reshape(-1, 2)[own].ravel())

    def set_focus_window(self, t0: int | None, t1: int | None) -> None:
        if t0 is None or t1 is None:
            self.focus_region.hide()
        else:
            self.focus_region.setRegion((t0, t1))
            self.focus_region.show()

    def set_annotations(self, ranges: list[tuple[int, int, str]]) -> None:
        for item in self.annotations:
            self.removeItem(item)
        self.annotations = []
        for t0, t1, text in ranges:
            region = pg.LinearRegionItem((t0, t1), brush=pg.mkBrush(120, 220, 120, 45), pen=pg.mkPen(60, 150, 60),
                                         movable=False)
            region.setZValue(4)
            region.setToolTip(text)
            self.addItem(region, ignoreBounds=True)
            label = pg.TextItem(text, color=(30, 100, 30), anchor=(0, 0))
            label.setPos(t0, 0)
            label.setZValue(20)
            self.addItem(label, ignoreBounds=True)
            self.annotations += [region, label]

    def highlight_location(self, loc: int) -> None:
        row = int(self.layout_rows.row_of[loc]) if 0 <= loc < len(self.layout_rows.row_of) else -1
        if row < 0:
            self.row_band.hide()
        else:
            self.row_band.setRegion((row, row + 1))
            self.row_band.show()

    def highlight_intervals(self, loc: np.ndarray, begin: np.ndarray, end: np.ndarray) -> None:
        """Mark intervals (e.g. a histogram cell's) with a bar on their rows."""
        rows = self.layout_rows.row_of[np.asarray(loc, np.int64)] if len(loc) else np.zeros(0, np.int64)
        keep = rows >= 0
        x = np.empty(2 * keep.sum())
        x[0::2], x[1::2] = np.asarray(begin)[keep], np.asarray(end)[keep]
        self.highlight.setData(x, np.repeat(rows[keep] + 0.85, 2))

    # ---- interaction ---------------------------------------------------------------------------
    def select_window(self, a: float, b: float) -> None:
        a, b = max(int(a), 0), min(int(b), self.data.t_end)
        if b > a:
            self.windowSelected.emit(a, b)

    def row_at(self, y: float) -> int:
        r = int(np.floor(y))
        return r if 0 <= r < len(self.layout_rows) else -1

    def clicked(self, x: float, y: float) -> None:
        r = self.row_at(y)
        if r >= 0:
            self.locationClicked.emit(int(self.layout_rows.rows[r].loc))

    def context_menu(self, y: float, screen_pos) -> None:
        """Collapse or expand the row's process or node."""
        r = self.row_at(y)
        if r < 0:
            return
        row = self.layout_rows.rows[r]
        menu = QMenu(self)
        loc = self.exp.definitions.locations[row.loc]
        node = self.exp.definitions.processes[loc.process].node if loc.process < len(
            self.exp.definitions.processes) else -1
        if row.group[0] == "location":
            menu.addAction("Collapse this process", lambda: self._toggle(("process", loc.process)))
            menu.addAction("Collapse this node", lambda: self._toggle(("node", node)))
        else:
            menu.addAction(f"Expand {row.label}", lambda: self._toggle(row.group))
        menu.popup(screen_pos)

    def _toggle(self, group: tuple) -> None:
        self.layout_rows.toggle(group)
        self._apply_rows()

    def info_at(self, x: float, y: float) -> dict | None:
        r = self.row_at(y)
        if r < 0 or not 0 <= x <= self.data.t_end:
            return None
        t0, t1 = self.window()
        tolerance = int(3 * (t1 - t0) / max(self.vb.width(), 1))
        info = self.data.info_at(int(self.layout_rows.rows[r].loc), int(x), tolerance)
        info["row"] = self.layout_rows.rows[r].label
        if self.last_picture is not None and self.last_picture.t1 > self.last_picture.t0:
            pic = self.last_picture
            i = int(np.searchsorted(self.last_rows, r))
            p = int((x - pic.t0) / (pic.t1 - pic.t0) * pic.values.shape[1])
            if i < len(self.last_rows) and self.last_rows[i] == r and 0 <= p < pic.values.shape[1]:
                v = pic.values[i, p]
                if self.mode.categorical and (v >= 0 or v == IDLE_GAP):
                    info["value"] = self.data.category_label(self.mode, int(v))
                    info["share"] = float(pic.share[i, p])
                elif np.isfinite(v) and not (np.issubdtype(pic.values.dtype, np.integer) and v < 0):
                    info["value"] = _format_mode_value(self.mode, float(v))     # -1 there: no record
        return info

    def _mouse_moved(self, pos: QPointF) -> None:
        if not self.vb.sceneBoundingRect().contains(pos):
            return
        p = self.vb.mapSceneToView(pos)
        self._hover_at = (p.x(), p.y())
        self._hover_timer.start()

    def _hover_now(self) -> None:
        if self._hover_at is not None:
            self.hovered.emit(self.info_at(*self._hover_at))

    def keyPressEvent(self, ev) -> None:  # noqa: N802 - Qt override
        key, mods = ev.key(), ev.modifiers()
        alt = mods & Qt.KeyboardModifier.AltModifier
        if key == Qt.Key.Key_Left and alt:
            self.back()
        elif key == Qt.Key.Key_Right and alt:
            self.forward()
        elif key == Qt.Key.Key_Left:
            self.pan_fraction(-0.2)
        elif key == Qt.Key.Key_Right:
            self.pan_fraction(0.2)
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1 / 2)
        elif key == Qt.Key.Key_Minus:
            self.zoom(2)
        elif key == Qt.Key.Key_Home:
            self.fit()
        else:
            super().keyPressEvent(ev)
            return
        ev.accept()


def _format_mode_value(mode: ColourMode, v: float) -> str:
    if mode.kind == "useful":
        return format_time(v)
    if mode.kind == "counter":
        return f"{v:.4g} /s"
    return f"{v:.4g}"

