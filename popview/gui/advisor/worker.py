"""Run metric computations off the GUI thread; only the newest answer counts.

Each request gets a ticket; when several are queued (the user clicks
through call paths faster than the engine answers), the older results are
dropped on arrival instead of flickering through the panel.
"""
from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from popview.failures import one_line


class _Signals(QObject):
    finished = Signal(int, object, object)   # ticket, result, error text


class _Job(QRunnable):
    def __init__(self, ticket, fn, signals):
        super().__init__()
        self.ticket, self.fn, self.signals = ticket, fn, signals

    def run(self):
        try:
            result, error = self.fn(), None
        except Exception as exc:  # reported in the panel, never swallowed
            result, error = None, f"{one_line(exc)}\n{traceback.format_exc(limit=3)}"
        try:
            self.signals.finished.emit(self.ticket, result, error)
        except RuntimeError:        # the pane was closed meanwhile: nobody waits for the answer
            pass


class LatestRunner(QObject):
    """submit(fn, on_done, sync) -> calls on_done(result, error) for the newest request."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._ticket = 0
        self._callbacks: dict[int, object] = {}
        self._signals = _Signals()
        self._signals.finished.connect(self._deliver)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)

    def submit(self, fn, on_done, sync: bool = False) -> None:
        self._ticket += 1
        ticket = self._ticket
        if sync:
            try:
                result, error = fn(), None
            except Exception as exc:
                result, error = None, one_line(exc)
            self._callbacks.clear()
            on_done(result, error)
            return
        self._callbacks[ticket] = on_done
        self._pool.start(_Job(ticket, fn, self._signals))

    def _deliver(self, ticket, result, error):
        on_done = self._callbacks.pop(ticket, None)
        if ticket != self._ticket or on_done is None:
            return
        self._callbacks.clear()
        on_done(result, error)

    def wait(self, msecs: int = -1) -> bool:
        return self._pool.waitForDone(msecs)
