"""Topology view: placement on grids and Cartesian topologies, hover and click."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from popview.gui.state import AppState
from popview.gui.topology import SLICE, X, Y, Z, TopologyPane, place_grid, place_topology
from popview.gui.trees import SystemTreePane
from popview.testing.synthetic_profile import SMALL_COMP, ProfileExperiment, small_definitions, small_profile

SOLVE = 3


def cube_topology(n: int) -> dict:
    """A 2 x 2 x 2 x 2 topology holding locations 0..n-1 in order."""
    coords = {str(i): [(i >> 3) & 1, (i >> 2) & 1, (i >> 1) & 1, i & 1] for i in range(n)}
    return {"name": "4d", "dims": [2, 2, 2, 2], "periodic": [False] * 4,
            "dim_names": ["a", "b", "c", "d"], "coords": coords}


@pytest.fixture
def pane(qtbot):
    state = AppState()
    topo = TopologyPane(state)
    system = SystemTreePane(state)
    for w in (topo, system):
        qtbot.addWidget(w)
    topo.resize(600, 400)
    topo.show()
    state.add_experiment(ProfileExperiment(small_profile(), small_definitions()))
    return state, topo, system


def test_grid_without_topology_is_process_by_thread():
    p = place_grid(small_definitions(), 5)
    assert p.y.tolist() == [0, 0, 1, 1, 1]          # rows: processes
    assert p.x.tolist() == [0, 1, 0, 1, 2]          # columns: threads, then the GPU stream
    assert (p.nx, p.ny, p.nz) == (3, 2, 1)


def test_dimensions_fold_and_slice():
    topo = cube_topology(5)
    p = place_topology(topo, 5, [X, Y, Z, Z], [0, 0, 0, 0])
    assert (p.nx, p.ny, p.nz) == (2, 2, 4)           # c and d folded into the planes
    assert p.z.tolist() == [0, 1, 2, 3, 0]
    assert p.y.tolist() == [0, 0, 0, 0, 1]
    sliced = place_topology(topo, 5, [X, Y, Z, SLICE], [0, 0, 0, 1])
    assert sliced.x.tolist() == [-1, 0, -1, 0, -1]   # only d == 1 stays


def test_cells_are_coloured_by_metric_and_callpath(pane):
    state, topo, _system = pane
    state.select_metric("comp")
    state.select_callpath(SOLVE)
    assert np.allclose(topo.canvas.values, SMALL_COMP[SOLVE])
    darkest = int(np.argmax(SMALL_COMP[SOLVE]))
    assert topo.canvas.rgb[darkest].sum() < topo.canvas.rgb[3].sum()


def test_click_selects_the_location_and_hover_tells_its_value(pane):
    state, topo, system = pane
    state.select_metric("comp")
    state.select_callpath(SOLVE)
    centre = topo.canvas.cell_rect(2).center().toPoint()
    assert topo.canvas.location_at(topo.canvas.cell_rect(2).center()) == 2
    QTest.mouseClick(topo.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    assert state.location == 2
    assert system.model.location_of(system.model.node_of(system.view.currentIndex())) == 2
    assert topo.canvas.tooltip_for(2) == "rank 1 thread 0 (location 2)\n2 s"
    QTest.mouseClick(topo.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(1, 1))
    assert state.location == 2                      # a click outside the cells changes nothing


def test_topology_from_definitions_offers_dimension_roles(qtbot):
    defs = small_definitions()
    defs.topologies = [cube_topology(5)]
    state = AppState()
    topo = TopologyPane(state)
    qtbot.addWidget(topo)
    state.add_experiment(ProfileExperiment(small_profile(), defs))
    assert topo.topology()["name"] == "4d"
    assert [b.currentText() for b in topo.role_boxes] == [X, Y, Z, SLICE]
    topo.set_roles([X, Y, SLICE, SLICE], [0, 0, 1, 0])
    assert topo.placement().x.tolist() == [-1, -1, 0, -1, -1]
    assert "1 of 5 locations shown" in topo.status.text()


def test_every_plane_label_is_drawn_in_the_text_colour(qtbot):
    """Plane labels after the first were drawn in the cell borders' white."""
    defs = small_definitions()
    defs.topologies = [cube_topology(5)]
    state = AppState()
    topo = TopologyPane(state)
    qtbot.addWidget(topo)
    topo.resize(700, 300)
    topo.show()
    state.add_experiment(ProfileExperiment(small_profile(), defs))
    topo.set_roles([X, Y, Z, Z], [0, 0, 0, 0])
    canvas = topo.canvas
    qtbot.waitExposed(topo)
    image = canvas.grab().toImage()
    text = canvas.palette().color(canvas.foregroundRole())
    _cw, _ch, pw = canvas._cell()
    for z in range(canvas.placement.nz):
        left = int(canvas.MARGIN + z * (pw + canvas.GAP))
        band = [image.pixelColor(x, y) for x in range(left, left + 40) for y in range(2, canvas.MARGIN - 2)]
        inked = [c for c in band if abs(c.lightness() - text.lightness()) < 60]
        assert len(inked) > 5, f"plane {z}: label not in the text colour"


@pytest.mark.parametrize("height", [None, 60, 90, 300])
def test_axis_label_never_overlaps_the_cells(pane, height):
    """A low Topology dock drew the 'x: thread' label over the cells (and its colour key):
    the cells stay above the label's line at any height, and the label's pixels are text on
    the background, not on a cell."""
    _state, topo, _system = pane
    canvas = topo.canvas
    h = canvas.minimumHeight() if height is None else max(height, canvas.minimumHeight())
    canvas.setFixedHeight(h)
    topo.resize(600, h + 200)
    QTest.qWait(50)
    assert canvas.height() == h
    label = canvas.axis_label_rect()
    assert label.bottom() <= canvas.height()
    cells = [canvas.cell_rect(i) for i in range(len(canvas.placement.x)) if canvas.placement.x[i] >= 0]
    assert cells and max(c.bottom() for c in cells) <= label.top(), (h, label, cells)
    assert min(c.height() for c in cells) >= 4
    image = canvas.grab().toImage()
    ink = canvas.palette().color(canvas.foregroundRole())
    width = canvas.fontMetrics().horizontalAdvance(canvas.axis_text())
    band = [image.pixelColor(x, y) for x in range(int(label.left()), int(label.left()) + width)
            for y in range(int(label.top()), int(label.bottom()))]
    assert sum(abs(c.lightness() - ink.lightness()) < 60 for c in band) > 20, "axis label not drawn as text"
    background = canvas.palette().color(canvas.backgroundRole())
    cell_colours = {canvas.rgb[i].tobytes() for i in range(len(canvas.rgb))}
    on_cells = [c for c in band if bytes([c.red(), c.green(), c.blue()]) in cell_colours
                and abs(c.lightness() - background.lightness()) > 30]
    assert len(on_cells) < len(band) // 10, "the axis label lies on the cells"
