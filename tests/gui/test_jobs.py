"""The window's one background runner (popview.gui.jobs): newest answer wins, errors reach
the pane and the log, work never runs on the GUI thread."""
from __future__ import annotations

import logging
import threading

import pytest
from PySide6.QtCore import QObject

from popview.gui import jobs

pytestmark = pytest.mark.answers_later


@pytest.fixture
def lane(qtbot):
    owner = QObject()
    made = jobs.Lane(owner, "test")
    yield made
    made.wait(10_000)
    owner.deleteLater()


def test_work_runs_off_the_gui_thread_and_answers_in_it(lane, qtbot):
    gui, seen = threading.current_thread(), {}

    def work():
        seen["worker"] = threading.current_thread()
        return 42

    lane.submit(work, lambda result, error: seen.update(result=result, error=error,
                                                          answered=threading.current_thread()))
    qtbot.waitUntil(lambda: "result" in seen, timeout=10_000)
    assert seen["worker"] is not gui and seen["answered"] is gui
    assert seen["result"] == 42 and seen["error"] is None


def test_only_the_newest_request_is_answered(lane, qtbot):
    release, answers = threading.Event(), []
    lane.submit(lambda: release.wait(10) and "first", lambda r, e: answers.append(r))
    lane.submit(lambda: "second", lambda r, e: answers.append(r))
    lane.submit(lambda: "third", lambda r, e: answers.append(r))
    release.set()
    assert lane.wait(10_000)
    assert answers == ["third"]


def test_a_superseded_job_is_told_to_stop(lane, qtbot):
    started, stopped = threading.Event(), threading.Event()

    def long_work(job):
        started.set()
        if job.cancel.wait(10):
            stopped.set()
        return "stopped"

    lane.submit(long_work, lambda r, e: None)
    assert started.wait(10)
    lane.submit(lambda: "newer", lambda r, e: None)
    assert stopped.wait(10)


def test_an_error_reaches_the_pane_and_the_log(lane, qtbot, caplog):
    answers = []

    def fail():
        raise ValueError("no records in this window")

    with caplog.at_level(logging.WARNING, logger="popview.gui"):
        lane.submit(fail, lambda r, e: answers.append((r, e)))
        assert lane.wait(10_000)
    (result, error), = answers
    assert result is None and "no records in this window" in error.splitlines()[0]
    assert "Traceback" in error
    assert any("no records in this window" in r.getMessage() for r in caplog.records)


def test_progress_is_reported_and_a_cancelled_lane_answers_nothing(lane, qtbot):
    progress, answers, go = [], [], threading.Event()
    lane.progressed.connect(lambda f, m: progress.append((f, m)))

    def work(job):
        job.progress(0.5, "half")
        go.wait(10)
        return "done"

    lane.submit(work, lambda r, e: answers.append(r))
    qtbot.waitUntil(lambda: progress == [(0.5, "half")], timeout=10_000)
    lane.cancel()
    go.set()
    assert lane.wait(10_000)
    assert answers == []


@pytest.mark.parametrize("cls, signature", [
    (jobs.Lane, "_deliver(int,PyObject,PyObject,QString)"),
    (jobs.Lane, "_progress(int,double,QString)"),
    ("popview.gui.logpane.LogPane", "append(int,QString)"),
    ("popview.gui.firstrun.CompileNotice", "_show(QString,int,int)"),
    ("popview.gui.widgets.compiling.CompileProgress", "_seen(QString,int,int)"),
])
def test_receivers_of_signals_from_other_threads_are_declared_slots(cls, signature):
    """PySide6 (6.8 on) crashed the window in garbage collection when a signal emitted in a
    worker thread (a compile, a log record, an answer) was delivered to a plain method."""
    if isinstance(cls, str):
        module, name = cls.rsplit(".", 1)
        cls = getattr(__import__(module, fromlist=[name]), name)
    assert cls.staticMetaObject.indexOfSlot(signature) >= 0, f"{cls.__name__}.{signature} is not a slot"


def test_a_lane_gone_while_its_job_runs_leaves_the_job_alive(qtbot):
    """A pane closed during a computation: its lane and the job's Python object part, the
    job still runs to its end in the pool (QThreadPool reads the task after run())."""
    import gc

    owner, release, ended = QObject(), threading.Event(), threading.Event()
    lane = jobs.Lane(owner, "closing")

    def work():
        release.wait(10)
        ended.set()
        return "late"

    lane.submit(work, lambda r, e: None)
    owner.deleteLater()
    del lane, owner
    qtbot.wait(50)
    gc.collect()
    release.set()
    assert ended.wait(10)
    assert jobs.wait_all(10_000)
    qtbot.wait(50)
