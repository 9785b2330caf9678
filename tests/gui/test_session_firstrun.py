"""First run: the demo opens with content and its bookmark; Help > Getting started lists shortcuts."""
from __future__ import annotations

import pytest

from popview.analysis.focus import Focus
from popview.demo import LOOP, ensure_demo
from popview.gui.firstrun import guide_html, install_guide, shortcuts, show_guide
from popview.gui.session_binding import open_session
from tests.gui.session_helpers import bound_window, use_fake_panes, wait_open


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    use_fake_panes(monkeypatch)


def test_demo_session_opens_the_series_with_focus_and_bookmark(qtbot, tmp_path, cache_dir):
    path = ensure_demo(tmp_path / "demo")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    open_session(window.state, path)
    wait_open(qtbot, window, 3)
    qtbot.waitUntil(lambda: window.state.focus == Focus.on_callpath(LOOP), timeout=5000)
    assert window.state.current.label == "4x2"
    assert len(set(window.state.series.values())) == 1, "the three runs form one series"
    bookmarks = window.panes["Bookmarks"]
    assert bookmarks.list.count() == 1 and bookmarks.annotation_list.count() == 2
    bookmarks.restore(window.state.session.bookmarks[0].id)
    assert window.state.focus.kind == "window" and window.state.metric == "mpi"
    assert window.panes["Timeline"].window_ns == (window.state.focus.t0, window.state.focus.t1)


def test_getting_started_lists_the_window_shortcuts(qtbot, tmp_path, cache_dir):
    window, _ = bound_window(qtbot, tmp_path, cache_dir)
    act = install_guide(window)
    assert window.menus["Help"].actions()[0] is act
    keys = dict(shortcuts(window))
    assert keys["File > Save session"] == "Ctrl+S"
    assert keys["Bookmarks > Bookmark this view"] == "Ctrl+B"
    assert keys["Help > Getting started"] == "F1"
    text = guide_html(window)
    for words in ("Drag a Paraver trace", "Pick a focus", "Read the Advisor", "Ctrl+B", "user-guide.md"):
        assert words in text
    dialog = show_guide(window)
    qtbot.addWidget(dialog)
    assert "Keyboard shortcuts" in dialog.browser.toPlainText()


def test_work_waits_for_the_first_paint(qtbot, tmp_path, cache_dir):
    from popview.gui.firstrun import after_first_paint

    window, _ = bound_window(qtbot, tmp_path, cache_dir)
    calls = []
    after_first_paint(window, lambda: calls.append(window.isVisible()))
    qtbot.wait(50)
    assert calls == []
    window.show()
    qtbot.waitUntil(lambda: calls == [True], timeout=5000)
