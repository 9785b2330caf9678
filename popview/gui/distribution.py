"""The distribution of the selected metric over locations for the selected call
path, beside the System tree (Cube's box-plot and sorted-bar plugins).

Box plot: quartiles, median, mean, Tukey whiskers and outliers, drawn as one
item (BoxItem paints a prepared QPicture). Sorted bars: every location's value,
largest first, as one pyqtgraph BarGraphItem. A click on a bar or an outlier
selects that location in every pane; the selected location is marked.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPicture
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from popview.analysis.distribution import RELATIVE_SPREAD, Summary, sorted_locations, summarise
from popview.gui.trees.source import profile_values, unavailable_reason
from popview.gui.widgets.colorscale import colours
from popview.gui.widgets.shown import WhenShown
from popview.gui.timeline.view import tick_labels
from popview.gui.widgets.units import format_value, is_time

BOX, BARS = "box", "bars"
LEVELS = 64                # colour steps of the bars
MAX_BARS = 2000            # beyond, bars stand for bins of ranks (never more bars than pixels)
BOX_FILL, LINE, MEAN, SELECTED = QColor(120, 160, 220, 150), QColor(30, 30, 30), QColor(200, 40, 40), QColor(230, 0, 200)


def outlier_x(n: int) -> np.ndarray:
    """Where the n outliers are drawn across the box (in location order, within its width)."""
    return np.linspace(-0.25, 0.25, n) if n > 1 else np.zeros(n)


class BoxItem(pg.GraphicsObject):
    """One box plot at x = 0, in data coordinates, painted from one QPicture."""

    def __init__(self, s: Summary, values: np.ndarray):
        super().__init__()
        self.summary = s
        self.outlier_values = values[s.outliers]
        self.picture = QPicture()
        p = QPainter(self.picture)
        pen = QPen(LINE)
        pen.setCosmetic(True)
        pen.setWidth(1)
        p.setPen(pen)
        p.setBrush(BOX_FILL)
        if s.q3 > s.q1:              # an empty box (q1 = q3) is only its median line
            p.drawRect(QRectF(-0.3, s.q1, 0.6, s.q3 - s.q1))
        lines = [(-0.3, s.median, 0.3, s.median), (0, s.q3, 0, s.high), (0, s.q1, 0, s.low),
                 (-0.15, s.high, 0.15, s.high), (-0.15, s.low, 0.15, s.low)]
        for x0, y0, x1, y1 in lines:
            if (x0, y0) != (x1, y1):    # a whisker of length 0 (q3 = high) painted as a dark band
                p.drawLine(QPointF(x0, y0), QPointF(x1, y1))
        mean_pen = QPen(MEAN, 2, Qt.PenStyle.DashLine)
        mean_pen.setCosmetic(True)
        p.setPen(mean_pen)
        p.drawLine(QPointF(-0.3, s.mean), QPointF(0.3, s.mean))
        p.end()
        span = s.maximum - s.minimum
        if span <= abs(s.maximum) * RELATIVE_SPREAD:
            # one value everywhere (every location 0 s): a range of 10 % of it (or 1) around it, not
            # 1e-30 wide, which drew a dark band over the plot and ticks such as 3.2800000035; a spread
            # below 0.1 % of the value (12 us in 3.28 s) is drawn the same way, not blown up to the axis
            span = 0.1 * abs(s.maximum) or 1.0
            low = s.minimum - span / 2 if s.minimum != 0 else -0.02 * span     # 0 s: no negative times
            self._bounds = QRectF(-0.5, low, 1.0, span)
        else:
            self._bounds = QRectF(-0.5, s.minimum - 0.02 * span, 1.0, span * 1.04)

    def paint(self, painter, *_args):
        painter.drawPicture(0, 0, self.picture)

    def boundingRect(self):  # noqa: N802 - Qt override
        return self._bounds


class ValueAxis(pg.AxisItem):
    """The value axis: a time in the window's units (ms, µs, s: as the trees and the timeline
    write it), any other unit as pyqtgraph ticks it. It read "sec" beside 0.0001, 0.0002..."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unit = ""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
        if is_time(self.unit):
            return tick_labels([v * 1e9 for v in values], spacing * 1e9,
                               max(abs(self.range[0]), abs(self.range[1])) * 1e9)
        return super().tickStrings(values, scale, spacing)


def axis_label(unit: str) -> str:
    return "time" if is_time(unit) else unit or "value"


class DistributionPane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.pv = None
        self.values = np.zeros(0)
        self.order = np.zeros(0, np.int64)
        self.summary: Summary | None = None
        self.kind = QComboBox(self)
        self.kind.addItem("Box plot", BOX)
        self.kind.addItem("Sorted bars", BARS)
        self.kind.currentIndexChanged.connect(lambda _i: self.draw())
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.value_axis = ValueAxis("left")
        self.value_axis.enableAutoSIPrefix(False)      # its label read "time (x0.001)" over ticks in ms
        self.plot = pg.PlotWidget(self, axisItems={"left": self.value_axis})
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(y=True, alpha=0.25)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        top = QHBoxLayout()
        top.addWidget(self.kind)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.caption)
        # behind the System tree's tab (the Overview) the run's values, their summary and the plot
        # wait until the pane shows: every opening spent ~5 ms of the GUI thread here unseen
        self._reload_soon = WhenShown(self, self.reload)
        self._refresh_soon = WhenShown(self, self.refresh)
        self._draw_soon = WhenShown(self, self.draw)
        state.currentExperimentChanged.connect(self._reload_soon)
        for signal in (state.metricSelected, state.callpathSelected):
            signal.connect(self._refresh_soon)
        state.selectionScopeChanged.connect(self._refresh_soon)
        state.locationSelected.connect(self._draw_soon)
        self.reload()

    def set_kind(self, kind: str) -> None:
        self.kind.setCurrentIndex(self.kind.findData(kind))

    def bring_up_to_date(self) -> None:
        """What a pane out of sight put off (WhenShown), done now."""
        if self._reload_soon.pending:
            self.reload()
        elif self._refresh_soon.pending:
            self.refresh()
        elif self._draw_soon.pending:
            self.draw()

    def reload(self) -> None:
        self._reload_soon.pending = False
        self.pv = profile_values(self.state.current)
        self.refresh()

    def refresh(self) -> None:
        self._refresh_soon.pending = False
        self.values, self.summary = np.zeros(0), None
        if self.pv is None:
            self._message(unavailable_reason(self.state.current))
            return
        s = self.state
        cp = s.callpath if 0 <= s.callpath < self.pv.profile.n_callpaths else -1
        try:
            self.values = np.asarray(self.pv.location_values(s.metric, s.metric_exclusive, cp, s.callpath_exclusive),
                                     float)
            self.unit = self.pv.node(s.metric).unit
            self.what = (f"{self.pv.node(s.metric).name} of "
                         f"{self.pv.profile.name(cp) if cp >= 0 else 'all call paths'}"
                         f"{' (exclusive)' if cp >= 0 and s.callpath_exclusive else ''}")
        except KeyError:
            self._message(f"The metric {s.metric!r} is not in this profile.")
            return
        self.summary = summarise(self.values)
        self.order = sorted_locations(self.values)
        self.draw()

    def _message(self, text: str) -> None:
        self.plot.clear()
        self.caption.setText(text)

    def location_name(self, loc: int) -> str:
        defs = getattr(self.state.current, "definitions", None)
        try:
            location = defs.locations[loc]
        except (AttributeError, IndexError):
            return f"location {loc}"
        try:                          # "OMP thread 5" alone does not say which of 8 ranks
            process = defs.processes[location.process].name
        except (AttributeError, IndexError):
            return location.name
        return location.name if process in location.name else f"{process}, {location.name}"

    def draw(self) -> None:
        self._draw_soon.pending = False
        self.plot.clear()
        s = self.summary
        if s is None:
            if self.pv is not None and not len(self.values) == 0:
                self.caption.setText(f"{self.what}: no location has a value")
            return
        unit = self.unit
        self.value_axis.unit = unit
        self.plot.setLabel("left", axis_label(unit))
        sel = self.state.location
        if self.kind.currentData() == BOX:
            self.plot.addItem(BoxItem(s, self.values))
            if len(s.outliers):            # spread sideways so that close outliers stay countable
                self.plot.addItem(pg.ScatterPlotItem(outlier_x(len(s.outliers)), self.values[s.outliers], size=6,
                                                     pen=pg.mkPen(LINE), brush=pg.mkBrush(None)))
            if 0 <= sel < len(self.values) and np.isfinite(self.values[sel]):
                self.plot.addItem(pg.ScatterPlotItem([0.0], [self.values[sel]], size=10, symbol="d",
                                                     brush=pg.mkBrush(SELECTED), pen=pg.mkPen(None)))
            self.plot.getAxis("bottom").setTicks([[(0, "")]])
            self.plot.setXRange(-1, 1, padding=0)
            self.plot.enableAutoRange(axis="y")
        else:
            v = self.values[self.order]
            n = len(v)
            # more bars than pixels: one bar per bin of ranks, as tall as its first (largest) value
            edges = (np.linspace(0, n, MAX_BARS + 1).astype(np.int64) if n > MAX_BARS
                     else np.arange(n + 1, dtype=np.int64))
            edges = np.unique(edges)
            heights, widths = v[edges[:-1]], np.diff(edges).astype(float)
            top = float(np.max(np.abs(v))) if n else 0.0
            frac = np.abs(heights) / top if top > 0 else np.zeros(len(heights))
            level = np.round(frac * (LEVELS - 1)).astype(np.int64)      # a few brushes shared by all bars
            palette = [pg.mkBrush(*c) for c in colours(np.linspace(0.0, 1.0, LEVELS))]
            brushes = [palette[k] for k in level]
            if 0 <= sel < len(self.values):
                where = np.flatnonzero(self.order == sel)
                if len(where):
                    brushes[int(np.searchsorted(edges, where[0], side="right") - 1)] = pg.mkBrush(SELECTED)
            self.plot.addItem(pg.BarGraphItem(x0=edges[:-1].astype(float), height=heights,
                                              width=widths * (0.9 if n <= MAX_BARS else 1.0), brushes=brushes,
                                              pen=pg.mkPen(None)))
            # a few bars: each numbered at its middle, 1 the largest (ticks read 0, 0.5, 1, 1.5 ... under 4 bars)
            step = max(1, -(-n // 10))
            self.plot.getAxis("bottom").setTicks(
                [[(k + 0.45, str(k + 1)) for k in range(0, n, step)]] if n <= MAX_BARS else None)
            self.plot.setLabel("bottom", "locations, largest value first")
            self.plot.enableAutoRange()
        self.caption.setText(self._caption(s, unit))

    def _caption(self, s: Summary, unit: str) -> str:
        f = (lambda x: format_value(x, unit))
        worst = self.location_name(int(self.order[0])) if len(self.order) else ""
        text = (f"{self.what} over {s.n} locations: min {f(s.minimum)}, median {f(s.median)}, mean {f(s.mean)}, "
                f"max {f(s.maximum)} ({worst})")
        if s.imbalance is not None:
            text += f"; max / mean {s.imbalance:.3f}"
        if len(s.outliers):
            text += f"; {len(s.outliers)} outlier{'s' if len(s.outliers) > 1 else ''}"
        if s.missing:
            text += f"; {s.missing} without a value"
        return text

    def _clicked(self, ev) -> None:
        if not len(self.values):
            return
        p = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        loc = self.location_at(p.x(), p.y())
        if loc >= 0:
            self.state.select_location(loc)

    def location_at(self, x: float, y: float) -> int:
        """The location drawn at (x, y) in data coordinates: a bar, or the nearest outlier."""
        if self.kind.currentData() == BARS:            # bar i spans ranks [i, i + 1)
            i = int(np.floor(x))
            return int(self.order[i]) if 0 <= i < len(self.order) else -1
        s = self.summary
        if s is None or not len(s.outliers) or abs(x) > 0.3:
            return -1
        rng = self.plot.getPlotItem().vb.viewRange()
        sx, sy = (rng[0][1] - rng[0][0]) or 1.0, (rng[1][1] - rng[1][0]) or 1.0
        d = ((outlier_x(len(s.outliers)) - x) / sx) ** 2 + ((self.values[s.outliers] - y) / sy) ** 2
        return int(s.outliers[np.argmin(d)])
