"""GUI tests: background answers arrive before the action that asked for them returns.

Panes compute in popview.gui.jobs' thread pools, never on the GUI thread. So
that a test can check a pane right after acting on it, each Lane.submit here
waits (processing events) until its answer was delivered: the work still runs
in the pool and comes back through the signal, as in the window. Tests of the
asynchronous behaviour itself are marked `answers_later`.
"""
from __future__ import annotations

import pytest

from popview.gui import collector, jobs


@pytest.fixture(autouse=True)
def cycles_collected_in_the_gui_thread(qapp):
    """As in the window (MainWindow installs it): panes tested alone have workers too. Undone
    after each test: tests without an event loop would otherwise never collect a cycle."""
    collector.install()
    yield
    collector.uninstall()


@pytest.fixture(autouse=True)
def answers_before_returning(request, monkeypatch):
    if request.node.get_closest_marker("answers_later"):
        yield
        return
    submit = jobs.Lane.submit

    def submit_and_wait(self, fn, on_done):
        job = submit(self, fn, on_done)
        if self._pool is jobs.pool(jobs.ANALYSIS):         # conversions keep their own pace
            self.wait()
        return job

    monkeypatch.setattr(jobs.Lane, "submit", submit_and_wait)
    yield
    jobs.wait_all(60_000)
