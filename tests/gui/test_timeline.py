"""The timeline pane: zoom, history, selection -> focus, colour modes, hover info."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

import popview
from popview.analysis.focus import Focus
from popview.gui import jobs
from popview.gui.timeline import TimelinePane
from popview.gui.timeline.pane import NO_TIMELINE
from popview.testing import synthetic
from tests.gui.panes import pane_alone


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("tl")
    shapes = {"a": synthetic.Shape(processes=2, threads=2, iterations=6, work_ns=2_000_000),
              "b": synthetic.Shape(processes=4, threads=1, iterations=4, work_ns=1_000_000),
              "c": synthetic.Shape(processes=1, threads=1, iterations=3, work_ns=1_000_000)}
    return {k: (synthetic.write(d / f"{k}.prv", s), d / f"{k}.prv", d / "cache") for k, s in shapes.items()}


@pytest.fixture
def pane(qtbot, traces):
    state, pane = pane_alone(qtbot, TimelinePane, (1200, 600))
    _, path, cache = traces["a"]
    exp = popview.open(path, cache_dir=cache)
    state.add_experiment(exp)
    qtbot.waitExposed(pane)
    pane.view.redraw_now()
    yield pane
    jobs.wait_all(30_000)
    exp.close()


class Drag:
    """The parts of a pyqtgraph drag event the view box reads."""

    def __init__(self, vb, t_from, t_to, row, button=Qt.MouseButton.LeftButton,
                 mods=Qt.KeyboardModifier.NoModifier, finish=True):
        self._down = vb.mapFromView(QPointF(t_from, row))
        self._pos = vb.mapFromView(QPointF(t_to, row))
        self._button, self._mods, self._finish = button, mods, finish
        self.accepted = False

    def button(self):
        return self._button

    def modifiers(self):
        return self._mods

    def buttonDownPos(self):  # noqa: N802 - pyqtgraph API
        return self._down

    def pos(self):
        return self._pos

    def lastPos(self):  # noqa: N802 - pyqtgraph API
        return self._down

    def isFinish(self):  # noqa: N802 - pyqtgraph API
        return self._finish

    def accept(self):
        self.accepted = True

    def ignore(self):
        pass


def test_draws_the_whole_run_with_state_colours(pane):
    view = pane.view
    t0, t1 = view.window()
    assert (t0, t1) == (0, view.data.t_end)
    pic = view.last_picture
    assert pic.values.shape[0] == len(view.layout_rows) == 4
    assert (pic.values == 1).mean() > 0.3                    # Running dominates a balanced run
    assert view.image.image is not None and view.image.image.dtype == np.uint8
    assert [r.label for r in view.layout_rows.rows] == [loc.name for loc in view.exp.definitions.locations]


def test_zoom_pan_and_history(pane, qtbot):
    view = pane.view
    full = view.window()
    view.zoom(0.5)
    half = view.window()
    assert half[1] - half[0] == pytest.approx((full[1] - full[0]) / 2, rel=1e-3)
    view.pan_fraction(0.25)
    panned = view.window()
    assert panned[0] > half[0]
    vb = view.vb
    drag = Drag(vb, panned[0] + 1000, panned[0] + 200_000, 1.5, button=Qt.MouseButton.RightButton)
    vb.mouseDragEvent(drag)
    assert drag.accepted
    band = view.window()
    assert band[1] - band[0] == pytest.approx(199_000, rel=0.01)
    assert view.last_redraw_ms >= 0
    view.back()
    assert view.window() == panned
    view.back()
    assert view.window() == half
    view.forward()
    assert view.window() == panned
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.window() == full
    view.set_window(0, 1_000_000)
    view.redraw_now()
    assert view.last_picture.source == "records" and view.last_picture.t1 - view.last_picture.t0 == 1_000_000


def test_wheel_zooms_at_the_cursor(pane):
    view = pane.view
    t0, t1 = view.window()

    class Wheel:
        def __init__(self, pos):
            self._pos = pos

        def delta(self):
            return 120

        def pos(self):
            return self._pos

        def modifiers(self):
            return Qt.KeyboardModifier.NoModifier

        def accept(self):
            pass

    centre = (t0 + t1) / 4
    view.vb.wheelEvent(Wheel(view.vb.mapFromView(QPointF(centre, 1.0))))
    a, b = view.window()
    assert b - a == pytest.approx((t1 - t0) / 1.25, rel=1e-3)
    assert (centre - a) / (b - a) == pytest.approx((centre - t0) / (t1 - t0), abs=1e-3)


def test_shift_drag_sets_the_focus_window(pane):
    view, state = pane.view, pane.state
    seen = []
    state.focusChanged.connect(seen.append)
    drag = Drag(view.vb, 2_000_000, 5_000_000, 0.5, mods=Qt.KeyboardModifier.ShiftModifier)
    view.vb.mouseDragEvent(drag)
    assert seen and seen[-1].kind == "window"
    assert (seen[-1].t0, seen[-1].t1) == pytest.approx((2_000_000, 5_000_000), abs=2)
    assert view.focus_region.isVisible() and view.focus_region.getRegion() == pytest.approx((seen[-1].t0, seen[-1].t1))
    state.set_focus(Focus.whole())
    assert not view.focus_region.isVisible()


def test_colour_mode_switch_changes_picture_and_legend(pane):
    view = pane.view
    labels = [pane.mode_box.itemText(i) for i in range(pane.mode_box.count())]
    assert {"State", "MPI call", "OpenMP construct", "Useful duration", "IPC"} <= set(labels)
    pane.mode_box.setCurrentIndex(labels.index("MPI call"))
    view.redraw_now()
    pane._settled()
    assert view.mode.kind == "mpi"
    shown = {view.data.category_label(view.mode, v) for v in np.unique(view.last_picture.values) if v >= 0}
    assert shown <= {"MPI_Sendrecv", "MPI_Allreduce", "MPI_Barrier", "MPI_Init", "MPI_Finalize"} and shown
    legend = [pane.legend.item(i).text() for i in range(pane.legend.count())]
    assert any(text.startswith("MPI_") for text in legend)
    pane.mode_box.setCurrentIndex(labels.index("Useful duration"))
    view.redraw_now()
    assert view.last_picture.values.dtype.kind == "f"
    assert np.nanmax(view.last_picture.values) > 0
    st = view.exp.reader.read("states", [0])
    other = np.flatnonzero((st["state"][1:-1] != 1) & (st["state"][:-2] == 1)) + 1
    i = int(other[len(other) // 2])                          # zoom onto a non-useful interval after a burst
    view.set_window(st["begin"][i] - 5000, st["end"][i])
    view.redraw_now()
    assert (view.image.image[0] == 0).any()                  # black outside useful computation
    assert (view.image.image[0] > 0).any()
    pane.fit_scale()
    shown = view.last_picture.values[np.isfinite(view.last_picture.values)]
    assert view.palette.low == shown.min() and view.palette.high >= shown.max()


def test_hover_says_what_and_where(pane, qtbot):
    view = pane.view
    t = view.data.t_end // 2
    info = view.info_at(t, 0.5)
    assert info["location"] == view.exp.definitions.locations[0].name
    assert "state" in info and "value" in info
    with qtbot.waitSignal(view.hovered, timeout=2000) as blocker:
        view._mouse_moved(view.vb.mapViewToScene(QPointF(t, 0.5)))
    assert blocker.args[0]["location"] == info["location"]
    assert info["location"] in pane.info.text()


def test_click_selects_the_location_and_grouping_collapses_rows(pane):
    view, state = pane.view, pane.state
    view.clicked(1000.0, 2.5)
    assert state.location == 2
    assert view.row_band.isVisible()
    pane.group_box.setCurrentIndex(1)                        # one row per process
    assert len(view.layout_rows) == 2
    view.redraw_now()
    assert view.last_picture.values.shape[0] == 2


def test_several_experiments_are_stacked_each_at_its_own_scale(pane, traces):
    _, path, cache = traces["b"]
    other = popview.open(path, cache_dir=cache)
    pane.state.add_experiment(other)
    assert len(pane.views) == 2
    ends = sorted(v.window()[1] for v in pane.views.values())
    assert ends == sorted(v.data.t_end for v in pane.views.values())
    assert ends[0] != ends[1]
    pane.state.remove_experiment(other)
    assert len(pane.views) == 1


def test_stacked_runs_follow_the_series_order_not_the_arrival_order(pane, traces):
    _, path, cache = traces["c"]
    smaller = popview.open(path, cache_dir=cache)     # 1 x 1, opened after the 2 x 2 run
    pane.state.add_experiment(smaller)
    order = [pane.splitter.widget(i) for i in range(pane.splitter.count())]
    assert order == [pane.views[id(e)] for e in (smaller, pane.state.experiments[0])]
    pane.state.remove_experiment(smaller)
    smaller.close()


def test_many_stacked_runs_scroll_instead_of_growing_the_pane(pane, traces):
    from popview.gui.timeline.pane import VIEW_MIN_HEIGHT

    before = pane.minimumSizeHint().height()
    # opened as the window's openings do: with the timeline overview ready (gui/workers.py)
    extra = [popview.open(traces[k][1], cache_dir=traces[k][2], timeline=True) for k in ("b", "c", "b", "c")]
    for exp in extra:
        pane.state.add_experiment(exp)
    assert len(pane.views) == 5
    assert pane.minimumSizeHint().height() == before, "the pane's minimum must not grow with the runs"
    assert pane.splitter.minimumSizeHint().height() >= 5 * VIEW_MIN_HEIGHT   # each run keeps a readable height
    for exp in extra:
        pane.state.remove_experiment(exp)
        exp.close()


def test_a_profile_says_it_has_no_timeline(qtbot):
    class Profile:
        is_trace = False

        def close(self):
            pass

    state, pane = pane_alone(qtbot, TimelinePane)
    state.add_experiment(Profile())
    assert pane.stack.currentWidget() is pane.message
    assert pane.message.text() == NO_TIMELINE
    # no tool acts on a timeline that is not there (the scout profile showed an empty colour
    # choice and live back / forward / fit buttons above the message)
    tools = [pane.mode_box, pane.group_box, pane.back_button, pane.forward_button, pane.fit_button,
             pane.goto_edit, pane.fit_scale_button, pane.save_button, pane.lines_box, pane.path_box]
    assert not any(w.isEnabled() for w in tools)


def test_tools_come_back_with_a_trace(pane):
    assert pane.stack.currentIndex() == 0
    assert all(w.isEnabled() for w in (pane.mode_box, pane.fit_button, pane.save_button, pane.lines_box))
    assert pane.mode_box.currentText() == "State"


def test_go_to_and_save(pane, tmp_path):
    view = pane.view
    pane.goto_edit.setText("1ms-2ms")
    pane._go_to()
    assert view.window() == (1_000_000, 2_000_000)
    pane.goto_edit.setText("whenever")
    pane._go_to()
    assert "not a time" in pane.info.text() and view.window() == (1_000_000, 2_000_000)
    pane.save_image(tmp_path / "t.png")
    pane.save_image(tmp_path / "t.svg")
    assert (tmp_path / "t.png").stat().st_size > 1000 and "<svg" in (tmp_path / "t.svg").read_text()[:2000]


def test_collapsing_a_process_from_its_row(pane):
    view = pane.view
    view._toggle(("process", 0))
    assert [r.group for r in view.layout_rows.rows][0] == ("process", 0) and len(view.layout_rows) == 3
    view.toggle_group_at(0)
    assert len(view.layout_rows) == 4


def test_critical_path_overlay(pane, qtbot):
    view = pane.view
    pane.path_box.setChecked(True)
    qtbot.waitUntil(lambda: view.critical_path is not None, timeout=60_000)
    path = view.critical_path
    x, y = view.path_route.getData()
    assert len(path["loc"]) > 0 and len(x) == 2 * len(path["loc"])
    assert np.all(np.diff(x) >= 0)                          # drawn in time order, no line runs back
    work, _ = view.path.getData()
    assert len(work) == 2 * int((~path["waiting"]).sum())   # thick where the path works
    assert "critical path" in pane.info.text()
    pane.path_box.setChecked(False)
    assert view.path.getData()[0] is None or len(view.path.getData()[0]) == 0
    assert view.path_route.getData()[0] is None or len(view.path_route.getData()[0]) == 0


def test_time_ticks_have_the_decimals_their_spacing_needs():
    from popview.gui.timeline.view import tick_labels
    assert tick_labels([4.0001e9, 4.0002e9], 1e5) == ["4.0001 s", "4.0002 s"]
    assert tick_labels([0, 5e8, 1e9], 5e8) == ["0 s", "0.5 s", "1 s"]
    assert tick_labels([2e5, 4e5], 2e5) == ["200 µs", "400 µs"]


def test_the_legend_names_a_category_drawn_as_one_pixel_column():
    """A short state drawn one pixel wide, at odd columns only, is in the legend."""
    from popview.gui.timeline.palette import Palette

    palette = Palette.__new__(Palette)
    palette.lut = np.zeros((256, 3), np.uint8)
    palette.labels = {1: "Running", 2: "Others"}
    image = np.ones((9, 100), np.uint8)
    image[:, 1::10] = 2
    legend = {label: fraction for _, label, fraction in palette.legend(image)}
    assert legend["Others"] == pytest.approx(0.1) and legend["Running"] == pytest.approx(0.9)


def test_the_status_is_above_the_legend_and_shortened_rather_than_cut_off(pane, qtbot):
    label = pane.source_label
    assert "shown" in label.text() and label.toolTip() == label.text()
    assert label.minimumSizeHint().width() == 0           # it never widens the pane
    assert label.geometry().right() <= label.parentWidget().width()
    assert label.shown_text() == label.text()             # the side column has room for it
    label.setText(label.text() + " · a note longer than the side column is wide")
    qtbot.wait(50)
    shown = label.shown_text()
    assert shown.endswith("…") and label.text().startswith(shown[:-1])


def _legend_names(pane) -> list[str]:
    return [pane.legend.item(i).text().rsplit("  ", 1)[0] for i in range(pane.legend.count())]


def test_legend_names_the_regions_drawn_when_regions_outnumber_the_colour_slots(qtbot, shared_traces, tmp_path):
    """Score-P defines every MPI function as a region (298 in the 2x2 heat run, 18 of them
    entered): region 254 and on shared colour slots with regions 0 and on, so the OpenMP
    legend read 'MPI_Cart_rank 46%' and call-path depth 0 'MPI_Comm_free 100%' (it is main)."""
    path = shared_traces / "popview-heat/scorep/hyb_2x2/traces.otf2"
    if not path.exists():
        pytest.skip(f"{path} is not among the shared traces")
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    assert len(exp.definitions.regions) > 254
    state, pane = pane_alone(qtbot, TimelinePane, (1200, 500))
    state.add_experiment(exp)
    qtbot.waitExposed(pane)
    region = np.asarray(exp.definitions.callpath_region)
    try:
        for i, mode in enumerate(pane._modes):
            if mode.kind not in ("mpi", "openmp", "callpath"):
                continue
            pane.mode_box.setCurrentIndex(i)
            view = pane.view
            view.redraw_now()
            pane._settled()
            values = np.unique(view.last_picture.values)
            values = values[values >= 0]
            drawn = {exp.definitions.regions[int(region[v] if mode.kind == "callpath" else v)].name for v in values}
            legend = _legend_names(pane)
            assert legend and set(legend) <= drawn, (mode.label, legend, drawn)
            if mode.kind == "openmp":
                assert all(name.startswith("!$omp") for name in legend), legend
            if mode.kind == "callpath" and mode.param == 0:
                assert legend == ["main"]
    finally:
        jobs.wait_all(30_000)
        exp.close()


def test_keys_past_the_colour_slots_are_others_not_another_keys_colour():
    """More categories than the LUT's 254 slots: the extra ones are 'others' (slot 255)."""
    from types import SimpleNamespace

    from popview.analysis.timeline_data import ColourMode
    from popview.gui.timeline.palette import SLOTS, Palette

    values = {k: f"value {k}" for k in range(300)}
    defs = SimpleNamespace(states={}, regions=[], callpath_region=[],
                           event_types={7: SimpleNamespace(values=values)})
    palette = Palette(SimpleNamespace(defs=defs), ColourMode("event", 7, True))
    index = palette.index(np.arange(300, dtype=np.int64))
    assert len(set(index[:SLOTS].tolist())) == SLOTS and (index[SLOTS:] == 255).all()
    assert [palette.labels[int(s)] for s in index[:SLOTS]] == [values[k] for k in range(SLOTS)]


def test_a_squeezed_timeline_keeps_its_check_boxes_whole(pane, qtbot):
    """A low docked timeline squeezed the overlay boxes to 13 of their 19 px: their names cut."""
    pane.resize(1200, 60)                       # below the pane's minimum: it stops there
    qtbot.wait(100)
    pane.side.layout().activate()
    boxes = [pane.lines_box, pane.flags_box, pane.path_box, pane.one_run_box]
    for box in boxes:
        assert box.height() >= box.sizeHint().height(), (box.text(), box.height(), box.sizeHint())
        assert box.width() >= box.sizeHint().width(), (box.text(), box.width(), box.sizeHint())
        inside = box.geometry().translated(box.parentWidget().mapTo(pane, box.parentWidget().rect().topLeft()))
        assert pane.rect().contains(inside), (box.text(), inside, pane.rect())
    rects = [b.geometry() for b in boxes] + [pane.legend.geometry(), pane.source_label.geometry()]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)
    assert pane.source_label.height() >= pane.source_label.fontMetrics().height()


def test_a_white_state_shows_in_the_legend(qtbot):
    """'Not created' is white: its legend sample is outlined, not invisible on white."""
    from PySide6.QtGui import QColor

    from popview.gui.timeline.pane import swatch

    image = swatch(QColor(255, 255, 255)).toImage()
    assert QColor(image.pixel(0, 0)) != QColor(255, 255, 255)
    assert QColor(image.pixel(7, 7)) == QColor(255, 255, 255)
