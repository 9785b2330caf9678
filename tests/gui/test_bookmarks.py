"""The Bookmarks pane: Ctrl+B, rename, reorder, delete, notes; annotation list."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from popview.analysis.focus import Focus
from tests.gui.session_helpers import bound_window, use_fake_panes


@pytest.fixture
def pane_and_binding(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    use_fake_panes(monkeypatch)
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.show()
    qtbot.waitExposed(window)
    pane = window.panes["Bookmarks"]
    names = iter(["one", "two", "three"])
    pane.ask_bookmark = lambda default: (next(names), f"note of {default}")
    return window, pane, binding


def names(pane):
    return [pane.list.item(i).text() for i in range(pane.list.count())]


def test_ctrl_b_bookmarks_the_view_with_a_note(qtbot, pane_and_binding):
    window, pane, binding = pane_and_binding
    window.state.set_focus(Focus.on_callpath("main/loop"))
    qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert names(pane) == ["one"]
    bm = window.state.session.bookmarks[0]
    assert bm.note == "note of Bookmark 1: main/loop"
    assert bm.view["app"]["focus"] == {"kind": "callpath", "callpath": "main/loop"}
    assert "Bookmarks" in window.menus


def test_rename_reorder_delete(qtbot, pane_and_binding):
    window, pane, binding = pane_and_binding
    for _ in range(3):
        pane.bookmark_view()
    b1, b2, b3 = (b.id for b in window.state.session.bookmarks)
    pane.list.item(1).setText("renamed")                      # what an in-place edit does
    assert [b.name for b in window.state.session.bookmarks] == ["one", "renamed", "three"]
    pane.list.setCurrentRow(2)
    pane._move(-1)
    assert names(pane) == ["one", "three", "renamed"]
    pane.move(b1, 2)
    assert [b.id for b in window.state.session.bookmarks] == [b3, b2, b1]
    pane.list.setCurrentRow(0)
    pane.delete_selected()
    assert names(pane) == ["renamed", "one"]
    assert binding.dirty


def test_note_is_edited_in_place(qtbot, pane_and_binding):
    window, pane, binding = pane_and_binding
    pane.bookmark_view()
    pane.list.setCurrentRow(0)
    assert pane.note.toPlainText() == "note of Bookmark 1: whole"
    pane.note.setPlainText("rank 3 is late")
    assert window.state.session.bookmarks[0].note == "rank 3 is late"
    assert pane.list.item(0).toolTip() == "rank 3 is late"


def test_bookmark_cancelled_adds_nothing(qtbot, pane_and_binding):
    window, pane, binding = pane_and_binding
    pane.ask_bookmark = lambda default: None
    assert pane.bookmark_view() is None
    assert window.state.session.bookmarks == [] and not binding.dirty
