"""The timeline as an analyst reads a series: the chosen run in view, each stacked run
readable, communication lines by zoom until the user sets them, no stale critical-path note, no -1 on hover."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.gui import jobs
from popview.gui.state import AppState
from popview.gui.timeline import TimelinePane
from popview.gui.timeline import view as timeline_view
from popview.gui.timeline.pane import READABLE_ROWS, ROW_PX
from popview.gui.widgets.units import format_span
from popview.testing import synthetic


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tlr")
    out = []
    for p in (1, 2, 4, 8, 16):
        shape = synthetic.Shape(processes=p, threads=1, iterations=3, work_ns=1_000_000)
        out.append(synthetic.write(d / f"run_{p}.prv", shape))
    return [(d / f"run_{p}.prv", d / "cache") for p in (1, 2, 4, 8, 16)]


@pytest.fixture
def pane(qtbot, runs):
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    pane.resize(900, 300)
    pane.show()
    exps = [popview.open(path, cache_dir=cache) for path, cache in runs]
    for exp in exps:
        state.add_experiment(exp, "run")
    qtbot.waitExposed(pane)
    yield pane
    jobs.wait_all(30_000)
    for exp in exps:
        exp.close()


def test_each_stacked_run_has_room_for_eight_labelled_rows(pane):
    for view in pane.views.values():
        rows = min(len(view.layout_rows), READABLE_ROWS)
        assert view.minimumHeight() >= rows * ROW_PX
    big = pane.views[id(pane.state.current)]
    assert len(big.layout_rows) == 16 and big.minimumHeight() >= READABLE_ROWS * ROW_PX


def test_choosing_a_run_scrolls_its_timeline_into_view(pane, qtbot):
    smallest = pane.state.by_size()[0]
    assert pane.state.current.name == "run_16"          # the largest of the series came first
    pane.state.set_current(smallest)
    view = pane.views[id(smallest)]

    def in_view():
        top = view.mapTo(pane.scroll.viewport(), view.rect().topLeft()).y()
        return 0 <= top < pane.scroll.viewport().height()
    qtbot.waitUntil(in_view, timeout=3000)
    pane.state.set_current(pane.state.by_size()[-1])
    view = pane.views[id(pane.state.current)]
    qtbot.waitUntil(in_view, timeout=3000)
    pane.scroll.verticalScrollBar().setValue(0)       # scrolled away, then the pane gets another height
    pane.resize(pane.width(), pane.height() - 120)
    qtbot.waitUntil(in_view, timeout=3000)


def test_one_run_at_a_time(pane):
    pane.one_run_box.setChecked(True)
    shown = [v for v in pane.views.values() if v.isVisible()]
    assert shown == [pane.views[id(pane.state.current)]]
    assert pane.view_state()["one_run"] is True
    pane.one_run_box.setChecked(False)
    assert all(v.isVisible() for v in pane.views.values())


def drawn_lines(view) -> int:
    x, _ = view.lines.getData()
    return 0 if x is None else len(x) // 2


def test_communication_lines_follow_the_zoom_until_the_user_sets_them(pane, monkeypatch):
    view = pane.view
    view.fit()
    everything = view.data.lines(view.layout_rows.locs, *view.window())
    total = len(everything.send_loc)
    assert total >= 8, "the synthetic run sends messages"
    few = total // 2                           # the run's messages go in 3 waves: one wave is few
    assert view.auto_lines() >= few, "the view is wide enough to tell a wave's lines apart"
    monkeypatch.setattr(timeline_view, "AUTO_LINES", few)
    view.redraw_now()
    assert pane.comms == "auto" and pane.lines_box.text() == "Comms (auto)"
    assert not view.show_lines and not pane.lines_box.isChecked() and drawn_lines(view) == 0, "zoomed out: off"
    t0, t1 = view.window()
    first = int(everything.send_time.min())
    view.set_window(t0, first + 1)             # zoomed in on the first wave
    view.redraw_now()
    assert view.show_lines and pane.lines_box.isChecked() and 0 < drawn_lines(view) <= few
    view.fit()
    view.redraw_now()
    assert not pane.lines_box.isChecked() and drawn_lines(view) == 0, "zoomed out again: off again"
    pane.lines_box.click()                     # the user asks for them: on at any zoom
    assert pane.comms == "on" and pane.lines_box.text() == "Comms"
    assert pane.lines_box.isChecked() and drawn_lines(view) > few
    pane.lines_box.click()                     # and off: off at any zoom
    view.set_window(t0, first + 1)
    view.redraw_now()
    assert pane.comms == "off" and not pane.lines_box.isChecked() and drawn_lines(view) == 0
    assert pane.view_state()["comms"] == "off"
    pane.restore_view_state({"comms": "auto"})
    assert pane.lines_box.isChecked() and drawn_lines(view) > 0, "automatic again: zoomed in, on"
    pane.restore_view_state({"comms": False})  # a session of the time the box was off by default
    assert pane.comms == "auto"


def test_automatic_lines_need_room_to_tell_them_apart(pane):
    view = pane.view
    wide = view.auto_lines()
    view.resize(view.width() // 3, view.height())
    view.vb.resize(view.vb.width() // 3, view.vb.height())
    assert view.auto_lines() < wide and view.auto_lines() <= view.vb.width() // timeline_view.AUTO_PX_PER_LINE


def test_the_info_bar_forgets_the_critical_path_when_it_is_unticked(pane, qtbot):
    pane.path_box.setChecked(True)
    qtbot.waitUntil(lambda: pane.info.text().startswith("critical path"), timeout=60_000)
    pane.path_box.setChecked(False)
    assert "critical path" not in pane.info.text()


def test_each_stacked_run_is_titled_with_its_run(pane):
    """Stacked runs all have rows named THREAD 1.1.1 ...: without a title an analyst could not
    tell the heat 1x1, 1x2 and 2x2 timelines apart but by their lengths."""
    current = pane.state.current
    for view in pane.views.values():
        text = view.plotItem.titleLabel.text
        assert f"{view.exp.name} ({view.exp.label})" in text and view.plotItem.titleLabel.isVisible()
        assert ("<b>" in text) == (view.exp is current), "the current run is the bold one"
    pane.state.set_current(pane.state.by_size()[0])
    assert "<b>" in pane.views[id(pane.state.current)].plotItem.titleLabel.text
    assert "<b>" not in pane.views[id(current)].plotItem.titleLabel.text
    pane.one_run_box.setChecked(True)           # alone, the run needs no title
    assert not pane.view.plotItem.titleLabel.isVisible()
    pane.one_run_box.setChecked(False)


def test_the_critical_path_note_is_the_current_runs(pane, qtbot):
    """Every stacked run draws its path; the note said whichever run's replay finished last
    (heat 2x2 current: "critical path 0 s - 2.04279 s ... 1 pieces of work", the 1x1 run's)."""
    pane.path_box.setChecked(True)
    qtbot.waitUntil(lambda: all(v.critical_path is not None for v in pane.views.values()), timeout=120_000)
    for exp in (pane.state.by_size()[0], pane.state.by_size()[-1]):
        pane.state.set_current(exp)
        path = pane.views[id(exp)].critical_path
        text = pane.info.text()
        assert text.startswith(f"critical path of {exp.name} ({exp.label}): ")
        assert f"{format_span(path['begin'][0], path['end'][-1])}:" in text and ("pieces of work" in text or "1 piece of work" in text)
    pane.path_box.setChecked(False)


def test_hover_where_there_is_no_record_shows_no_value(pane):
    view = pane.view
    view.redraw_now()
    pic = view.last_picture
    pic.values[...] = -1 if np.issubdtype(pic.values.dtype, np.integer) else np.nan
    t0, t1 = view.window()
    info = view.info_at((t0 + t1) / 2, 0.5)
    assert info is None or "value" not in info


def test_openmp_synchronisation_and_group_communication_look_different():
    from popview.model.states import OPENMP_SYNC, default_states
    states = default_states()
    a, b = np.array(states[OPENMP_SYNC]["color"]), np.array(states[13]["color"])
    assert states[13]["name"] == "Group Communication"
    assert np.linalg.norm(a - b) > 100


def _named(pane, view) -> bool:
    """The run's name is on screen over its timeline: its own title whole in the scroll area, or
    the pinned header naming it, lying over its rows."""
    port = pane.scroll.viewport()
    title = view.plotItem.titleLabel
    rect = view.mapFromScene(title.mapRectToScene(title.boundingRect())).boundingRect()
    top = view.mapTo(port, rect.topLeft()).y()
    if title.isVisible() and rect.height() > 0 and 0 <= top and top + rect.height() <= port.height():
        return True
    header = getattr(pane, "run_header", None)
    if header is None or not header.isVisible() or f"{view.exp.name} ({view.exp.label})" not in header.text():
        return False
    view_top = view.mapTo(port, view.rect().topLeft()).y()
    return view_top <= header.y() and header.geometry().bottom() <= view_top + view.height()


def test_every_stacked_run_in_sight_is_named_wherever_it_is_scrolled(pane, qtbot):
    """The series opened scrolled to its largest run; the run above showed its last rows, all named
    THREAD 1.x.y like every run's, without its title (heat 1x1 over 1x2, EPOCH 8 over 16)."""
    port = pane.scroll.viewport()
    bar = pane.scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=3000)
    step = 7
    for value in list(range(0, bar.maximum() + 1, step)) + [bar.maximum()]:
        bar.setValue(value)
        qtbot.wait(5)
        for view in pane.views.values():
            top = view.mapTo(port, view.rect().topLeft()).y()
            shown = min(top + view.height(), port.height()) - max(top, 0)
            if shown >= 40:                        # a row and more of it in sight
                assert _named(pane, view), (value, view.exp.name, top, shown)
    pane.state.set_current(pane.state.by_size()[-1])       # as opened: the largest run in view
    qtbot.wait(50)
    others = [v for v in pane.views.values() if v is not pane.view]
    above = [v for v in others if v.mapTo(port, v.rect().topLeft()).y() < 0 < v.mapTo(port, v.rect().bottomLeft()).y() - 40]
    assert all(_named(pane, v) for v in above)


def test_a_run_scrolled_down_to_its_time_axis_alone_is_named(pane, qtbot):
    """Audit G7: a run scrolled under the top edge but for its time axis (under 35 px, no row)
    showed a scale without a name; the pinned header names it as it names the runs with rows."""
    port = pane.scroll.viewport()
    bar = pane.scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=3000)
    seen = 0
    for value in range(0, bar.maximum() + 1, 3):
        bar.setValue(value)
        qtbot.wait(5)
        for view in pane.views.values():
            top = view.mapTo(port, view.rect().topLeft()).y()
            shown = top + view.height()
            if top < 0 and 4 <= shown < 35:             # the axis, not a row, in sight
                seen += 1
                assert _named(pane, view), (value, view.exp.name, shown)
    assert seen, "some scroll position shows a run's time axis alone"


def test_the_point_under_the_mouse_names_its_run_when_stacked(pane):
    view = pane.views[id(pane.state.by_size()[0])]
    t0, t1 = view.window()
    view.hovered.emit(view.info_at((t0 + t1) / 2, 0.5))
    assert pane.info.text().startswith(f"<b>{view.exp.name} ({view.exp.label})</b>: ")
