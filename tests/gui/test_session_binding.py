"""Sessions in the window: save, close, reopen, restore bookmarks; recovery; moved traces."""
from __future__ import annotations

import shutil

import pytest

from popview.analysis.focus import Focus
from popview.gui.annotations import annotate, marked_callpaths, time_ranges
from popview.gui.session_binding import open_session
from popview.session import Recovery, load
from tests.gui.session_helpers import bound_window, use_fake_panes, wait_open
from tests.paraver.prvtext import write_trace


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    use_fake_panes(monkeypatch)


def set_view(window, focus, metric, callpath, location, window_ns, variant):
    s = window.state
    s.set_focus(focus)
    s.select_metric(metric)
    s.select_callpath(callpath)
    s.select_location(location)
    window.panes["Timeline"].zoom(*window_ns)
    window.panes["Advisor"].variant = variant


def view_of(window):
    s = window.state
    return (s.current.source.name, s.focus, s.metric, s.callpath, s.location,
            window.panes["Timeline"].window_ns, window.panes["Advisor"].variant)


def test_bookmarks_and_annotations_survive_save_close_reopen(qtbot, tmp_path, cache_dir):
    a = write_trace(tmp_path / "runs", name="a")
    b = write_trace(tmp_path / "runs", name="b")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([a, b])
    wait_open(qtbot, window, 2)
    pane = window.panes["Bookmarks"]

    window.state.set_current(window.state.experiments[1])
    set_view(window, Focus.on_callpath("main_loop"), "mpi", 1, 1, (100, 700), "hybrid_multiplicative")
    first = view_of(window)
    pane.ask_bookmark = lambda default: ("late rank", "rank 1 waits in the allreduce")
    pane.bookmark_view()
    annotate(window.state, "callpath", values={"text": "hot loop"}, callpath=1)
    annotate(window.state, "time_range", values={"text": "collective", "color": "#d62728"}, t0=600, t1=1000)

    window.state.set_current(window.state.experiments[0])
    set_view(window, Focus.window(0, 500), "comp", 0, 0, (0, 1000), "pop_mpi")
    last = view_of(window)
    pane.ask_bookmark = lambda default: ("overview", "")
    pane.bookmark_view()
    assert binding.dirty

    binding.ask_save_path = lambda: tmp_path / "study"
    assert binding.save_as()
    assert binding.path == tmp_path / "study.popview" and not binding.dirty
    assert window.close()

    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    open_session(window2.state, tmp_path / "study.popview")
    wait_open(qtbot, window2, 2)
    qtbot.waitUntil(lambda: view_of(window2) == last, timeout=5000)
    assert not binding2.dirty
    pane2 = window2.panes["Bookmarks"]
    assert [pane2.list.item(i).text() for i in range(pane2.list.count())] == ["late rank", "overview"]

    rect = pane2.list.visualItemRect(pane2.list.item(0))
    from PySide6.QtCore import Qt
    qtbot.mouseClick(pane2.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view_of(window2) == first
    assert window2.state.session.bookmarks[0].note == "rank 1 waits in the allreduce"
    assert marked_callpaths(window2.state) == {1: ["hot loop"]}
    (t0, t1, label, colour, loc), = time_ranges(window2.state)
    assert (t0, t1, label, colour.name(), loc) == (600, 1000, "collective", "#d62728", None)
    assert pane2.annotation_list.count() == 2


def test_unsaved_changes_prompt_on_close(qtbot, tmp_path, cache_dir):
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.state.set_focus(Focus("auto"))
    answers = []
    binding.ask_save_changes = lambda: answers.append("asked") or "cancel"
    assert not window.close()
    assert answers == ["asked"]
    binding.ask_save_changes = lambda: "save"
    binding.ask_save_path = lambda: tmp_path / "kept.popview"
    assert window.close()
    assert load(tmp_path / "kept.popview").view["app"]["focus"] == {"kind": "auto"}


def test_autosave_recovery_is_offered_after_a_crash(qtbot, tmp_path, cache_dir):
    trace = write_trace(tmp_path / "runs", name="a")
    crashed = Recovery(tmp_path / "state" / "recovery", pid=999_999_999)      # a process that no longer exists
    window, binding = bound_window(qtbot, tmp_path, cache_dir, recovery=crashed)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    window.state.set_focus(Focus.on_callpath("main_loop"))
    window.panes["Bookmarks"].ask_bookmark = lambda default: ("before the crash", "")
    window.panes["Bookmarks"].bookmark_view()
    binding.autosave()
    assert crashed.path.exists()
    window.removeEventFilter(binding)            # the crash: no clean close, the recovery file stays
    window.hide()

    offered = []
    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    binding2.ask_restore = lambda path, session: offered.append(path) or True
    assert binding2.offer_recovery()
    assert offered == [crashed.path]
    wait_open(qtbot, window2, 1)
    qtbot.waitUntil(lambda: window2.state.focus == Focus.on_callpath("main_loop"), timeout=5000)
    assert [b.name for b in window2.state.session.bookmarks] == ["before the crash"]
    assert binding2.dirty, "a recovered session is unsaved work"
    assert not crashed.path.exists()


def test_offer_is_skipped_when_nothing_crashed(qtbot, tmp_path, cache_dir):
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    binding.ask_restore = lambda *a: pytest.fail("nothing to recover")
    assert not binding.offer_recovery()


def test_moved_trace_is_located_and_remembered(qtbot, tmp_path, cache_dir):
    trace = write_trace(tmp_path / "project" / "runs", name="a")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    binding.save_to(tmp_path / "project" / "s.popview")
    window.close()

    shutil.move(tmp_path / "project" / "runs", tmp_path / "elsewhere")
    asked = []
    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    binding2.ask_locate = lambda ref, message: asked.append(message) or tmp_path / "elsewhere" / "a.prv"
    open_session(window2.state, tmp_path / "project" / "s.popview")
    wait_open(qtbot, window2, 1)
    assert "no such file" in asked[0]
    assert window2.state.current.source == tmp_path / "elsewhere" / "a.prv"
    assert binding2.dirty
    binding2.save()
    assert load(tmp_path / "project" / "s.popview").experiments[0].path == str(tmp_path / "elsewhere" / "a.prv")


def test_trace_moved_inside_the_session_folder_is_found_without_asking(qtbot, tmp_path, cache_dir):
    trace = write_trace(tmp_path / "project" / "runs", name="a")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    binding.save_to(tmp_path / "project" / "s.popview")
    window.close()
    (tmp_path / "project" / "old").mkdir()
    shutil.move(tmp_path / "project" / "runs", tmp_path / "project" / "old" / "runs")
    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    binding2.ask_locate = lambda *a: pytest.fail("should be found by content")
    open_session(window2.state, tmp_path / "project" / "s.popview")
    wait_open(qtbot, window2, 1)
    assert window2.state.current.source == tmp_path / "project" / "old" / "runs" / "a.prv"


def test_changed_trace_opens_with_a_warning(qtbot, tmp_path, cache_dir):
    trace = write_trace(tmp_path / "runs", name="a")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    binding.save_to(tmp_path / "s.popview")
    window.close()
    trace.write_text(trace.read_text().replace(":600:", ":650:"))
    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    warnings = binding2.warnings
    open_session(window2.state, tmp_path / "s.popview")
    wait_open(qtbot, window2, 1)
    assert any("may point at other data" in w for w in warnings)


def test_corrupt_session_file_is_reported_not_opened(qtbot, tmp_path, cache_dir):
    (tmp_path / "bad.popview").write_text('{"format": "popview-session", "version": 2, "experi')
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    warnings = binding.warnings
    window.open_paths([tmp_path / "bad.popview"])
    assert len(warnings) == 1 and "truncated" in warnings[0] and "bad.popview" in warnings[0]
    assert window.state.experiments == []


def test_session_file_dropped_on_the_window_opens(qtbot, tmp_path, cache_dir):
    from PySide6.QtCore import QMimeData, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    trace = write_trace(tmp_path / "runs", name="a")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    window.state.set_focus(Focus.on_callpath("main_loop"))
    binding.save_to(tmp_path / "dropped.popview")
    window.close()

    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "dropped.popview"))])
    pos = window2.rect().center()
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    enter = QDragEnterEvent(pos, *args)
    QApplication.sendEvent(window2, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(window2, QDropEvent(pos.toPointF(), *args))
    wait_open(qtbot, window2, 1)
    qtbot.waitUntil(lambda: window2.state.focus == Focus.on_callpath("main_loop"), timeout=5000)
    assert binding2.path == tmp_path / "dropped.popview"


def test_view_is_restored_even_when_a_trace_fails_to_open(qtbot, tmp_path, cache_dir):
    a = write_trace(tmp_path / "runs", name="a")
    b = write_trace(tmp_path / "runs", name="b")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([a, b])
    wait_open(qtbot, window, 2)
    window.state.set_focus(Focus.on_callpath("main_loop"))
    binding.save_to(tmp_path / "s.popview")
    window.close()
    b.write_text("#Paraver (broken\n")
    window2, binding2 = bound_window(qtbot, tmp_path, cache_dir)
    window2.report_failure = lambda message, details: window2.errors.append(message)
    open_session(window2.state, tmp_path / "s.popview")
    wait_open(qtbot, window2, 1)
    assert any("b.prv" in e for e in window2.errors)
    assert any("may point at other data" in w for w in binding2.warnings)
    qtbot.waitUntil(lambda: window2.state.focus == Focus.on_callpath("main_loop"), timeout=5000)
    assert len(window2.state.session.experiments) == 2, "the missing run stays in the session"


def test_a_picture_run_leaves_no_recovery_to_offer(qtbot, tmp_path, cache_dir, monkeypatch):
    """POPVIEW_SCREENSHOT quits once the picture is saved: a clean end, not a crash."""
    from PySide6.QtWidgets import QApplication

    from popview.gui import screenshot

    trace = write_trace(tmp_path / "runs", name="a")
    recovery = Recovery(tmp_path / "state" / "recovery")
    window, binding = bound_window(qtbot, tmp_path, cache_dir, recovery=recovery)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    window.state.set_focus(Focus.on_callpath("main_loop"))
    binding.autosave()
    assert recovery.path.exists()
    exits = []
    monkeypatch.setattr(QApplication, "exit", staticmethod(lambda code=0: exits.append(code)))
    screenshot._save_and_quit(window, tmp_path / "shot.png")
    assert exits == [0] and (tmp_path / "shot.png").exists()
    assert not recovery.path.exists() and not binding.autosave_timer.isActive()


@pytest.mark.answers_later
def test_the_picture_waits_for_the_panes_background_work(qtbot, tmp_path, cache_dir, monkeypatch):
    """The demo's picture showed the Advisor 'calculating...' while kernels compiled."""
    import threading

    from PySide6.QtWidgets import QApplication

    from popview.gui import jobs, screenshot

    trace = write_trace(tmp_path / "runs", name="a")
    window, _ = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([trace])
    wait_open(qtbot, window, 1)
    monkeypatch.setattr(QApplication, "exit", staticmethod(lambda code=0: None))
    monkeypatch.setattr(screenshot, "SETTLE_MS", 10)
    release = threading.Event()
    lane = jobs.Lane(window, "slow pane")
    lane.submit(lambda: release.wait(20), lambda r, e: None)
    shot = tmp_path / "shot.png"
    screenshot.save_when_open(window, shot, expect_runs=True)
    qtbot.wait(800)
    assert not shot.exists()
    release.set()
    qtbot.waitUntil(shot.exists, timeout=10_000)
