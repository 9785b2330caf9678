"""Named layouts: one click apart, each giving its main view the room, saved with the session."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from popview.gui import layouts
from popview.gui.mainwindow import MainWindow
from popview.gui.session_binding import binding_for


@pytest.fixture
def window(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), cache_dir=cache_dir)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(500)                   # the first-run sizes, asked one after the other
    w.resize(1280, 800)
    return w


def settle(window, qtbot):
    qtbot.wait(400)
    window.resize(1280, 800)          # the Overview's minimum may have grown the window
    qtbot.wait(100)


def on_screen(dock) -> bool:
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def rect(window, title):
    dock = window.docks[title]
    return dock.geometry()


def test_advisor_first_puts_the_trees_above_a_tall_advisor(window, qtbot):
    window.layout_actions[layouts.ADVISOR].trigger()       # one click
    settle(window, qtbot)
    assert window.layout_name == layouts.ADVISOR and window.layout_actions[layouts.ADVISOR].isChecked()
    trees = [rect(window, t) for t in ("Metrics", "Call tree", "System tree")]
    assert all(on_screen(window.docks[t]) for t in ("Metrics", "Call tree", "System tree", "Advisor"))
    assert trees[0].right() < trees[1].left() and trees[1].right() < trees[2].left()
    advisor = rect(window, "Advisor")
    assert advisor.top() > max(r.bottom() for r in trees)
    assert advisor.height() > 1.2 * trees[0].height()
    assert window.size().width() == 1280 and window.size().height() == 800


def test_timeline_first_gives_the_timeline_most_of_the_height_and_histograms_beside(window, qtbot):
    window.apply_layout(layouts.TIMELINE)
    settle(window, qtbot)
    timeline, hist = rect(window, "Timeline"), rect(window, "Histograms")
    assert on_screen(window.docks["Timeline"]) and on_screen(window.docks["Histograms"])
    assert timeline.height() > 0.55 * window.height()
    assert hist.left() > timeline.right() and abs(hist.top() - timeline.top()) < 5
    assert window.size().width() == 1280 and window.size().height() == 800


def test_overview_is_the_first_run_layout(window, qtbot):
    window.apply_layout(layouts.TIMELINE)
    settle(window, qtbot)
    window.apply_layout(layouts.OVERVIEW)
    settle(window, qtbot)
    assert window.layout_actions[layouts.OVERVIEW].isChecked()
    assert window.saveState() == window._default_state or on_screen(window.docks["Timeline"])


def test_the_layout_is_saved_with_the_session(window, qtbot, tmp_path):
    binding = binding_for(window.state)
    binding.attach(window, autosave_ms=3_600_000, offer_recovery=False)
    window.apply_layout(layouts.TIMELINE)
    settle(window, qtbot)
    session = binding.snapshot()
    assert session.layout["name"] == layouts.TIMELINE
    window.apply_layout(layouts.ADVISOR)
    settle(window, qtbot)
    binding._restore_layout(session.layout)
    assert window.layout_name == layouts.TIMELINE and window.layout_actions[layouts.TIMELINE].isChecked()
    assert rect(window, "Timeline").height() > 0.5 * window.height()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_overview_sizes_follow_the_window_not_the_first_run_size(window, qtbot, size):
    """Switching to the Overview sized the docks for a 1500 x 950 window whatever the window's
    size: at 1920 x 1080 the trees' row had 180 px and the topology's cells 25 px."""
    window.resize(*size)
    qtbot.wait(200)
    window.apply_layout(layouts.TIMELINE)
    qtbot.wait(400)
    window.resize(*size)
    window.apply_layout(layouts.OVERVIEW)
    qtbot.wait(600)
    window.resize(*size)
    qtbot.wait(200)
    assert (window.width(), window.height()) == size
    h = window.height()
    for title, low in (("Timeline", 0.22), ("Metrics", 0.2), ("Advisor", 0.23)):
        assert rect(window, title).height() >= low * h, (title, rect(window, title).height(), h)
    assert rect(window, "Metrics").width() >= 0.2 * window.width()
