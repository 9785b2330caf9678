"""A bookmark with the real panes: the Advisor's variant and the call tree's state come back."""
from __future__ import annotations

from PySide6.QtCore import QSettings

from popview.analysis.focus import Focus
from popview.demo import ensure_demo
from popview.gui.mainwindow import MainWindow
from popview.gui.session_binding import binding_for, open_session
from popview.gui.state import AppState
from tests.gui.session_helpers import no_dialogs, wait_open


def test_bookmark_restores_the_advisor_variant(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    state = AppState()
    binding = binding_for(state)
    no_dialogs(binding)
    window = MainWindow(state=state, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        cache_dir=cache_dir)
    qtbot.addWidget(window)
    binding.attach(window, autosave_ms=3_600_000, offer_recovery=False)
    advisor = window.panes["Advisor"]
    open_session(state, ensure_demo(tmp_path / "demo"))
    wait_open(qtbot, window, 3)
    qtbot.waitUntil(lambda: advisor.current_tab() is not None, timeout=30000)
    keys = [advisor.tabs.widget(i).variant.key for i in range(advisor.tabs.count())]
    assert len(keys) >= 2, "a hybrid run offers several variants"
    advisor.select_variant(keys[1])
    state.set_focus(Focus.on_callpath("main/timestep"))
    window.panes["Bookmarks"].ask_bookmark = lambda default: ("second variant", "")
    bm = window.panes["Bookmarks"].bookmark_view()
    assert bm.view["panes"]["Advisor"]["variant"] == keys[1]
    advisor.select_variant(keys[0])
    state.set_focus(Focus.whole())
    window.panes["Bookmarks"].restore(bm.id)
    assert advisor.current_tab().variant.key == keys[1]
    assert state.focus == Focus.on_callpath("main/timestep")
