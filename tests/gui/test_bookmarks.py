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


def test_annotations_added_from_the_selection_edited_and_deleted(qtbot, pane_and_binding, tmp_path):
    from popview.gui import annotations
    from tests.gui.session_helpers import wait_open
    from tests.paraver.prvtext import write_trace

    window, pane, binding = pane_and_binding
    assert pane.annotation_targets() == []
    window.open_paths([write_trace(tmp_path / "runs", name="a")])
    wait_open(qtbot, window, 1)
    window.state.select_callpath(1)
    window.panes["Timeline"].zoom(100, 900)
    kinds = [kind for _text, kind, _target in pane.annotation_targets()]
    assert kinds == ["callpath", "time_range", "experiment"]
    for _text, kind, target in pane.annotation_targets():
        annotations.annotate(window.state, kind, values={"text": f"on {kind}"}, **target)
    assert pane.annotation_list.count() == 3
    assert annotations.marked_callpaths(window.state) == {1: ["on callpath"]}
    actions = annotations.context_actions(window.state, "callpath", pane, callpath=1)
    assert [a.text() for a in actions] == ["Annotate this call path...", "Edit annotation \u201con callpath\u201d...",
                                           "Delete annotation \u201con callpath\u201d"]
    ann = window.state.session.annotations[0]
    with qtbot.waitSignal(window.state.annotationsChanged):
        annotations.edit_annotation(window.state, ann, values={"text": "hot loop"})
    assert "hot loop" in pane.annotation_list.item(0).text()
    actions[2].trigger()
    assert annotations.marked_callpaths(window.state) == {}
    window.state.select_callpath(-1)
    pane.annotation_list.setCurrentRow(0)
    pane._delete_selected_annotation()
    assert [a.kind for a in window.state.session.annotations] == ["experiment"]
    assert binding.dirty


def test_annotations_are_listed_by_their_target_s_name(qtbot, pane_and_binding, tmp_path):
    from popview.gui import annotations
    from popview.gui.trees.source import profile_values
    from tests.gui.session_helpers import wait_open
    from tests.paraver.prvtext import write_trace

    window, pane, _binding = pane_and_binding
    window.open_paths([write_trace(tmp_path / "runs", name="a")])
    wait_open(qtbot, window, 1)
    exp = window.state.current
    window.state.select_callpath(1)
    window.state.select_location(1)
    texts = [text for text, _kind, _target in pane.annotation_targets()]
    callpath = profile_values(exp).profile.name(1)
    location = exp.definitions.locations[1].name
    assert any(callpath in t for t in texts) and any(location in t for t in texts)
    assert not any("#" in t for t in texts)
    for _text, kind, target in pane.annotation_targets()[:2]:
        annotations.annotate(window.state, kind, values={"text": f"on {kind}"}, **target)
    listed = [pane.annotation_list.item(i).text() for i in range(pane.annotation_list.count())]
    assert any(f"call path {callpath}" in t for t in listed), listed
    assert any(location in t and "on location" in t for t in listed), listed
    assert not any("#" in t for t in listed)
