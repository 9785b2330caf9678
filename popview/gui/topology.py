"""The topology view: locations placed on their Cartesian topology (or on a
node > process > thread grid when the data define none), coloured by the
selected metric and call path.

Each dimension of a topology gets a role: X, Y, Z (planes drawn side by
side) or a slice at one coordinate. Several dimensions on one axis are
folded into it (mixed radix), so any number of dimensions can be shown.
Coordinates no location occupies are greyed. Hover shows location and
value; a click selects the location for every pane.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QSizePolicy, QSpinBox, QToolTip, QVBoxLayout, QWidget,
)

from popview.gui.trees.source import profile_values, unavailable_reason
from popview.gui.widgets.colorscale import ColorLegend, colours
from popview.gui.widgets.shown import WhenShown
from popview.gui.widgets.units import format_value

X, Y, Z, SLICE = "X", "Y", "Z", "slice"
UNUSED = QColor("#eeeeee")


@dataclass
class Placement:
    """Where each location is drawn: cell (x, y, z), or -1 when sliced away."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    nx: int
    ny: int
    nz: int
    x_label: str
    y_label: str
    z_label: str


def _fold(coords: np.ndarray, dims: list[int], sizes: list[int]) -> tuple[np.ndarray, int]:
    """Mixed-radix index of the given dimensions (first = most significant)."""
    idx = np.zeros(len(coords), np.int64)
    n = 1
    for d in dims:
        idx = idx * sizes[d] + coords[:, d]
        n *= sizes[d]
    return idx, n


def place_topology(topo: dict, n_locations: int, roles: list[str], slices: list[int]) -> Placement:
    """Cells of the locations on a Cartesian topology, given a role per dimension."""
    sizes = [max(int(s), 1) for s in topo["dims"]]
    names = list(topo.get("dim_names") or []) + [""] * len(sizes)
    coords = np.full((n_locations, len(sizes)), -1, np.int64)
    for loc, c in topo.get("coords", {}).items():
        loc = int(loc)
        if 0 <= loc < n_locations and len(c) == len(sizes):
            coords[loc] = c
    placed = (coords >= 0).all(axis=1)
    for d, role in enumerate(roles):
        if role == SLICE:
            placed &= coords[:, d] == slices[d]
    safe = np.where(coords >= 0, coords, 0)
    axes = {}
    for axis in (X, Y, Z):
        dims = [d for d, r in enumerate(roles) if r == axis]
        idx, n = _fold(safe, dims, sizes)
        label = " x ".join(names[d] or f"dim {d}" for d in dims)
        axes[axis] = (np.where(placed, idx, -1), n, label)
    return Placement(axes[X][0], axes[Y][0], axes[Z][0], axes[X][1], axes[Y][1], axes[Z][1],
                     axes[X][2], axes[Y][2], axes[Z][2])


def place_grid(defs, n_locations: int) -> Placement:
    """Without a topology: one row per process (grouped by node), one column per thread."""
    if defs is None or len(defs.locations) != n_locations or not defs.processes:
        side = int(np.ceil(np.sqrt(max(n_locations, 1))))
        loc = np.arange(n_locations)
        return Placement(loc % side, loc // side, np.zeros(n_locations, np.int64), side,
                         (n_locations + side - 1) // side, 1, "location", "location", "")
    proc = defs.location_process().astype(np.int64)
    if len(np.unique(proc)) == n_locations:         # one location per process: a square of processes
        side = int(np.ceil(np.sqrt(n_locations)))
        loc = np.arange(n_locations)
        return Placement(loc % side, loc // side, np.zeros(n_locations, np.int64), side,
                         (n_locations + side - 1) // side, 1, f"process mod {side}", f"process / {side}", "")
    n_procs = len(defs.processes)
    nodes = np.array([p.node for p in defs.processes], np.int64)
    row_of_proc = np.empty(n_procs, np.int64)
    row_of_proc[np.lexsort((np.arange(n_procs), nodes))] = np.arange(n_procs)
    by_proc = np.argsort(proc, kind="stable")
    first = np.searchsorted(proc[by_proc], np.arange(n_procs))
    col = np.empty(n_locations, np.int64)
    col[by_proc] = np.arange(n_locations) - first[proc[by_proc]]
    return Placement(col, row_of_proc[proc], np.zeros(n_locations, np.int64), int(col.max()) + 1 if n_locations else 1,
                     n_procs, 1, "thread", "process (by node)", "")


def plane_images(p: Placement, rgb: np.ndarray) -> list[QImage]:
    """One image per Z plane, a pixel per cell; unused cells in the background grey."""
    grey = np.array(UNUSED.getRgb()[:3], np.uint8)
    planes = np.empty((p.nz, p.ny, p.nx, 3), np.uint8)
    planes[:] = grey
    shown = p.x >= 0
    planes[p.z[shown], p.y[shown], p.x[shown]] = rgb[shown]
    images = []
    for z in range(p.nz):
        buf = np.ascontiguousarray(planes[z])
        img = QImage(buf.data, p.nx, p.ny, 3 * p.nx, QImage.Format.Format_RGB888)
        images.append(img.copy())                  # own the pixels; buf is temporary
    return images


class TopologyCanvas(QWidget):
    """Draws the cells; reports hover and clicks in location numbers."""

    MARGIN = 24          # left, and above the planes when they have Z labels
    EDGE = 6             # above the cells without plane labels, and around the axis label
    GAP = 16

    def __init__(self, pane, parent=None):
        super().__init__(parent)
        self.pane = pane
        self.placement: Placement | None = None
        self.values = np.zeros(0)
        self.rgb = np.zeros((0, 3), np.uint8)
        self.selected = -1
        self.names: list[str] = []
        self.unit = ""
        self.images: list[QImage] = []
        self.setMouseTracking(True)
        # a low dock keeps the window within the screen, yet cells keep some 20 px above the axis label
        self.setMinimumSize(120, self.fontMetrics().height() + 2 * self.EDGE + 22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(400, 300)

    def set_data(self, placement: Placement, values: np.ndarray, names: list[str], unit: str) -> None:
        self.placement, self.values, self.names, self.unit = placement, values, names, unit
        top = float(np.nanmax(np.abs(values))) if len(values) and np.isfinite(values).any() else 0.0
        self.rgb = colours(values / top if top else np.zeros(len(values)))
        self.images = plane_images(placement, self.rgb)
        self.update()

    # ---- geometry ------------------------------------------------------------------
    def _top(self) -> int:
        """Where the cells start: below the planes' labels when there are several planes."""
        p = self.placement
        return self.MARGIN if p is not None and p.nz > 1 else self.EDGE

    def axis_label_rect(self) -> QRectF:
        """The line under the cells that names the axes (the cells never reach it)."""
        line = self.fontMetrics().height()
        return QRectF(self.MARGIN, self.height() - line - self.EDGE // 2, max(self.width() - self.MARGIN, 1), line)

    def _cell(self) -> tuple[float, float, float]:
        """(cell width, cell height, plane width): cells at most 4 times longer than wide,
        between the plane labels and the axis label (which they never overlap)."""
        p = self.placement
        w = max(self.width() - 2 * self.MARGIN - (p.nz - 1) * self.GAP, 10) / p.nz
        h = max(self.axis_label_rect().top() - self.EDGE - self._top(), 4)
        cw, ch = w / p.nx, h / p.ny
        cw = min(cw, 4 * max(ch, 6.0))
        ch = min(ch, 4 * max(cw, 6.0))
        return cw, ch, cw * p.nx

    def cell_rect(self, loc: int) -> QRectF:
        p = self.placement
        cw, ch, pw = self._cell()
        z = p.z[loc]
        return QRectF(self.MARGIN + z * (pw + self.GAP) + p.x[loc] * cw, self._top() + p.y[loc] * ch, cw, ch)

    def location_at(self, pos: QPointF) -> int:
        p = self.placement
        if p is None or not len(p.x):
            return -1
        cw, ch, pw = self._cell()
        px, py = pos.x() - self.MARGIN, pos.y() - self._top()
        z = int(px // (pw + self.GAP))
        x = int((px - z * (pw + self.GAP)) // cw)
        y = int(py // ch)
        if px < 0 or py < 0 or not (0 <= x < p.nx and 0 <= y < p.ny and 0 <= z < p.nz):
            return -1
        hit = np.flatnonzero((p.x == x) & (p.y == y) & (p.z == z))
        return int(hit[0]) if len(hit) else -1

    # ---- painting and mouse ---------------------------------------------------------
    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt override
        p = self.placement
        if p is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        cw, ch, pw = self._cell()
        top = self._top()
        for z, image in enumerate(self.images):
            left = self.MARGIN + z * (pw + self.GAP)
            painter.drawImage(QRectF(left, top, pw, p.ny * ch), image)
            if p.nz > 1:                               # the text colour, not the borders' white
                painter.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText)))
                painter.drawText(QPointF(left, top - 6), f"{p.z_label} = {z}")
            if cw > 6 and ch > 6:                      # cell borders when cells are big enough to see
                painter.setPen(QPen(QColor("#ffffff")))
                for i in range(p.nx + 1):
                    painter.drawLine(QPointF(left + i * cw, top), QPointF(left + i * cw, top + p.ny * ch))
                for j in range(p.ny + 1):
                    painter.drawLine(QPointF(left, top + j * ch), QPointF(left + pw, top + j * ch))
        if 0 <= self.selected < len(p.x) and p.x[self.selected] >= 0:
            painter.setPen(QPen(QColor("#000000"), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(self.cell_rect(self.selected).adjusted(1, 1, -1, -1))
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.axis_label_rect(), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         self.axis_text())

    def axis_text(self) -> str:
        p = self.placement
        return f"x: {p.x_label}   y: {p.y_label}" if p is not None else ""

    def tooltip_for(self, loc: int) -> str:
        value = float(self.values[loc]) if loc < len(self.values) else float("nan")
        return f"{self.names[loc]} (location {loc})\n{format_value(value, self.unit)}"

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        loc = self.location_at(event.position())
        if loc >= 0:
            QToolTip.showText(event.globalPosition().toPoint(), self.tooltip_for(loc), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        loc = self.location_at(event.position())
        if loc >= 0 and event.button() == Qt.MouseButton.LeftButton:
            self.pane.state.select_location(loc)


class TopologyPane(QWidget):
    """The topology of the current experiment, coloured like the system tree."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.pv = None
        self.topo_combo = QComboBox(self)
        self.topo_combo.currentIndexChanged.connect(lambda _i: self._topology_changed())
        self.dims_bar = QHBoxLayout()
        self.canvas = TopologyCanvas(self, self)
        self.legend = ColorLegend(self)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Topology:"))
        top.addWidget(self.topo_combo, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addLayout(self.dims_bar)
        lay.addWidget(self.canvas, 1)
        lay.addWidget(self.legend)
        lay.addWidget(self.status)
        self.role_boxes: list[QComboBox] = []
        self.slice_boxes: list[QSpinBox] = []
        self._placement = None
        self._names = None
        # behind the System tree's tab (the Overview) the run's placement and values waited until
        # the pane shows: opening a run spent 50 ms of the GUI thread here for no one to see
        self._reload_soon = WhenShown(self, self.reload)
        self._refresh_soon = WhenShown(self, self.refresh)
        state.currentExperimentChanged.connect(self._reload_soon)
        for sig in (state.metricSelected, state.callpathSelected):
            sig.connect(self._refresh_soon)
        state.selectionScopeChanged.connect(self._refresh_soon)
        state.locationSelected.connect(self._on_location)
        self.reload()

    @property
    def definitions(self):
        return getattr(self.state.current, "definitions", None)

    def _loaded(self) -> None:
        """What a hidden pane put off (WhenShown), done now that its state is asked for."""
        if self._reload_soon.pending:
            self.reload()

    def reload(self) -> None:
        self._reload_soon.pending = self._refresh_soon.pending = False
        self.pv = profile_values(self.state.current)
        self._placement = None
        self._names = None
        self.topo_combo.blockSignals(True)
        self.topo_combo.clear()
        self.topo_combo.addItem("Node > process > thread grid", -1)
        for i, topo in enumerate(getattr(self.definitions, "topologies", None) or []):
            self.topo_combo.addItem(f"{topo.get('name', 'topology')} ({' x '.join(map(str, topo['dims']))})", i)
        self.topo_combo.setCurrentIndex(1 if self.topo_combo.count() > 1 else 0)
        self.topo_combo.blockSignals(False)
        self._topology_changed()

    def topology(self) -> dict | None:
        self._loaded()
        i = self.topo_combo.currentData()
        return None if i is None or i < 0 else self.definitions.topologies[i]

    def _topology_changed(self) -> None:
        while self.dims_bar.count():
            w = self.dims_bar.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        self.role_boxes, self.slice_boxes = [], []
        topo = self.topology()
        if topo is not None:
            names = topo.get("dim_names") or []
            for d, size in enumerate(topo["dims"]):
                role = QComboBox(self)
                role.addItems([X, Y, Z, SLICE])
                role.setCurrentIndex(min(d, 2) if d < 3 else 3)
                sl = QSpinBox(self)
                sl.setRange(0, max(int(size) - 1, 0))
                sl.setToolTip("Coordinate shown when this dimension is sliced")
                name = names[d] if d < len(names) and names[d] else f"dim {d}"
                self.dims_bar.addWidget(QLabel(f"{name} ({size}):"))
                self.dims_bar.addWidget(role)
                self.dims_bar.addWidget(sl)
                role.currentIndexChanged.connect(lambda _i: self.refresh())
                sl.valueChanged.connect(lambda _v: self.refresh())
                self.role_boxes.append(role)
                self.slice_boxes.append(sl)
            self.dims_bar.addStretch(1)
        self.refresh()

    def set_roles(self, roles: list[str], slices: list[int] | None = None) -> None:
        self._loaded()
        for box, role in zip(self.role_boxes, roles):
            box.setCurrentText(role)
        for box, s in zip(self.slice_boxes, slices or []):
            box.setValue(s)

    def placement(self) -> Placement | None:
        """Cells of the locations for the chosen topology and dimension roles (cached)."""
        self._loaded()
        if self.pv is None:
            return None
        n = self.pv.profile.n_locations
        topo = self.topology()
        key = (id(self.pv), self.topo_combo.currentIndex(), tuple(b.currentText() for b in self.role_boxes),
               tuple(b.value() for b in self.slice_boxes))
        if self._placement is None or self._placement[0] != key:
            if topo is None:
                placed = place_grid(self.definitions, n)
            else:
                placed = place_topology(topo, n, list(key[2]), list(key[3]))
            self._placement = (key, placed)
        return self._placement[1]

    def location_names(self) -> list[str]:
        defs = self.definitions
        n = self.pv.profile.n_locations
        if self._names is None or len(self._names) != n:
            self._names = [loc.name for loc in defs.locations] if defs is not None and len(defs.locations) == n \
                else [f"location {i}" for i in range(n)]
        return self._names

    def refresh(self) -> None:
        if self.pv is None:
            self.canvas.placement = None
            self.canvas.update()
            self.status.setText(unavailable_reason(self.state.current))
            return
        placement = self.placement()
        cp = self.state.callpath if 0 <= self.state.callpath < self.pv.profile.n_callpaths else None
        try:
            values = self.pv.location_values(self.state.metric, self.state.metric_exclusive, cp,
                                             self.state.callpath_exclusive)
            unit = self.pv.node(self.state.metric).unit
        except KeyError:
            self.status.setText(f"The metric {self.state.metric!r} is not in this profile.")
            return
        n = self.pv.profile.n_locations
        names = self.location_names()
        self.canvas.selected = self.state.location
        self.canvas.set_data(placement, values, names, unit)
        top = float(np.nanmax(np.abs(values))) if len(values) else 0.0
        self.legend.set_range(format_value(top, unit) + " (largest location)")
        hidden = int((placement.x < 0).sum())
        self.status.setText(f"{self.pv.node(self.state.metric).name}: {n - hidden} of {n} locations shown"
                            + (f" ({hidden} sliced away or without coordinates)" if hidden else ""))

    def view_state(self) -> dict:
        self._loaded()
        return {"topology": self.topo_combo.currentIndex(), "roles": [b.currentText() for b in self.role_boxes],
                "slices": [b.value() for b in self.slice_boxes]}

    def restore_view_state(self, d: dict) -> None:
        self._loaded()
        if 0 <= d.get("topology", -1) < self.topo_combo.count():
            self.topo_combo.setCurrentIndex(d["topology"])
        if len(d.get("roles", [])) == len(self.role_boxes):
            self.set_roles(d["roles"], d.get("slices"))

    def _on_location(self, loc: int) -> None:
        self.canvas.selected = loc
        self.canvas.update()
