"""No pane floats over the window or off screen on start: a saved state that did so is repaired."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication

from popview.gui import layouts
from popview.gui.mainwindow import MainWindow
from popview.gui.session_binding import binding_for

NO_AREA = Qt.DockWidgetArea.NoDockWidgetArea


@pytest.fixture
def settings_path(tmp_path, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    return str(tmp_path / "s.ini")


def new_window(qtbot, settings_path, cache_dir, size=(1280, 800)) -> MainWindow:
    w = MainWindow(settings=QSettings(settings_path, QSettings.Format.IniFormat), cache_dir=cache_dir)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(300)
    return w


def save_with_floating(qtbot, settings_path, cache_dir, title: str, where: QRect) -> None:
    """A previous run that closed with `title` floating at `where`."""
    w = new_window(qtbot, settings_path, cache_dir)
    dock = w.docks[title]
    dock.setFloating(True)
    dock.setGeometry(where)
    qtbot.wait(50)
    assert dock.isFloating()
    w.save_layout()
    w.close()


def docked(window, title: str) -> bool:
    dock = window.docks[title]
    return not dock.isFloating() and window.dockWidgetArea(dock) != NO_AREA and dock.window() is window


def screen_room() -> QRect:
    return QGuiApplication.primaryScreen().availableGeometry()


def test_an_advisor_saved_floating_over_the_whole_window_starts_docked(qtbot, settings_path, cache_dir):
    room = screen_room()
    save_with_floating(qtbot, settings_path, cache_dir, "Advisor",
                       QRect(room.x(), room.y(), room.width() - 20, room.height() - 20))
    w = new_window(qtbot, settings_path, cache_dir)
    assert docked(w, "Advisor")
    advisor = w.docks["Advisor"]
    assert advisor.isVisible() and not advisor.visibleRegion().isEmpty(), "the Advisor is in front of its tabs"
    assert w.rect().contains(advisor.geometry()), "the Advisor lies inside the window"


def test_a_pane_saved_floating_off_every_screen_starts_docked_or_on_screen(qtbot, settings_path, cache_dir):
    room = screen_room()
    save_with_floating(qtbot, settings_path, cache_dir, "Scaling",
                       QRect(room.right() + 3000, room.bottom() + 3000, 300, 200))
    w = new_window(qtbot, settings_path, cache_dir)
    scaling = w.docks["Scaling"]
    assert docked(w, "Scaling") or room.contains(scaling.frameGeometry()), scaling.frameGeometry()


def test_a_small_floating_pane_on_screen_stays_floating_inside_the_screen(qtbot, settings_path, cache_dir):
    room = screen_room()
    # mostly on the screen, its right edge past it: kept floating, moved onto the screen
    save_with_floating(qtbot, settings_path, cache_dir, "Log",
                       QRect(room.right() - 150, room.y() + 40, 200, 120))
    w = new_window(qtbot, settings_path, cache_dir)
    log = w.docks["Log"]
    assert log.isFloating()
    assert room.contains(log.frameGeometry()), (log.frameGeometry(), room)


def test_a_session_that_floats_the_advisor_is_repaired_too(qtbot, settings_path, cache_dir):
    w = new_window(qtbot, settings_path, cache_dir)
    binding = binding_for(w.state)
    binding.attach(w, autosave_ms=3_600_000, offer_recovery=False)
    room = screen_room()
    w.docks["Advisor"].setFloating(True)
    w.docks["Advisor"].setGeometry(QRect(room.x(), room.y(), room.width(), room.height()))
    layout = binding.snapshot().layout
    w.apply_layout(layouts.ADVISOR)
    qtbot.wait(200)
    binding._restore_layout(layout)
    assert docked(w, "Advisor")


def test_first_run_and_every_layout_give_docked_panes(qtbot, settings_path, cache_dir):
    w = new_window(qtbot, settings_path, cache_dir)
    assert all(docked(w, t) for t in w.docks), "first run"
    for key in layouts.LAYOUTS:
        for dock in w.docks.values():
            dock.setFloating(True)
        w.apply_layout(key)
        qtbot.wait(300)
        floating = [t for t in w.docks if not docked(w, t)]
        assert not floating, f"{key}: {floating} float"
