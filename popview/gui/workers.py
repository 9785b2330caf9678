"""Opening experiments off the GUI thread, with progress and cancel.

An OpenJob runs `popview.open(path, progress=..., cancel=...)` (and warms the
experiment's profile) in a QThread. The GUI thread only receives signals, so
the window stays responsive; cancelling sets the threading.Event the core
checks at each progress report.
"""
from __future__ import annotations

import threading
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

import popview
from popview.cache.progress import Cancelled
from popview.failures import one_line
from popview.readers.errors import InputError


def warm_profile(exp) -> None:
    """Load the experiment's profile and its totals now, in the worker, not in the GUI thread."""
    from popview.gui.trees.source import profile_values

    pv = profile_values(exp)
    if pv is not None and pv.first_metric() is not None:
        pv.callpath_values(pv.first_metric())
        for key in pv.roots():
            pv.total(key)


class _Runner(QObject):
    """Lives in the worker thread; does the blocking work."""

    progressed = Signal(float, str)
    done = Signal(object)
    failed = Signal(str, str)        # short message, details
    cancelled = Signal()

    def __init__(self, path: Path, cancel: threading.Event, opener, cache_dir):
        super().__init__()
        self.path, self.cancel, self.opener, self.cache_dir = path, cancel, opener, cache_dir

    @Slot()
    def run(self) -> None:
        try:
            exp = self.opener(self.path, cache_dir=self.cache_dir, progress=self._report, cancel=self.cancel)
            if self.cancel.is_set():
                exp.close()
                raise Cancelled("cancelled by the user")
            try:
                warm_profile(exp)
            except Cancelled:
                exp.close()
                raise
        except Cancelled:
            self.cancelled.emit()
        except InputError as exc:
            self.failed.emit(str(exc), traceback.format_exc())
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the thread
            self.failed.emit(f"{self.path}: {one_line(exc)}", traceback.format_exc())
        else:
            self.done.emit(exp)

    def _report(self, fraction: float, message: str) -> None:
        self.progressed.emit(float(fraction), message)


class OpenJob(QObject):
    """One file being opened. Signals arrive in the GUI thread."""

    progressed = Signal(float, str)     # fraction 0..1, message
    opened = Signal(object)             # Experiment
    failed = Signal(str, str)           # message naming the file, details (traceback)
    cancelled = Signal()
    finished = Signal()                 # after any of the three outcomes

    def __init__(self, path, opener=None, cache_dir=None, series: str | None = None, parent=None):
        super().__init__(parent)
        self.path = Path(path)
        self.series = series
        self._cancel = threading.Event()
        self.started = False
        self._thread = QThread()
        self._runner = _Runner(self.path, self._cancel, opener or popview.open, cache_dir)
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        self._runner.progressed.connect(self.progressed)
        self._runner.done.connect(self._on_done)
        self._runner.failed.connect(self._on_failed)
        self._runner.cancelled.connect(self._on_cancelled)

    def start(self) -> None:
        self.started = True
        self._thread.start()

    def cancel(self) -> None:
        """Stop the work; a job still waiting for its turn ends at once."""
        self._cancel.set()
        if not self.started:
            self.started = True
            QTimer.singleShot(0, self._on_cancelled)

    @property
    def running(self) -> bool:
        return self.started and not self._thread.isFinished()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def wait(self, ms: int = 30000) -> bool:
        return self._thread.wait(ms)

    def _stop_thread(self) -> None:
        self._thread.quit()
        self._thread.wait()

    def _on_done(self, exp) -> None:
        self._stop_thread()
        if self._cancel.is_set():          # cancelled after the work finished: drop the result
            exp.close()
            self.cancelled.emit()
        else:
            self.opened.emit(exp)
        self.finished.emit()

    def _on_failed(self, message: str, details: str) -> None:
        self._stop_thread()
        self.failed.emit(message, details)
        self.finished.emit()

    def _on_cancelled(self) -> None:
        self._stop_thread()
        self.cancelled.emit()
        self.finished.emit()


class CallJob(QThread):
    """Runs one blocking call (e.g. writing the demo traces) off the GUI thread."""

    done = Signal(object)
    failed = Signal(str, str)

    def __init__(self, fn, parent=None):
        super().__init__(parent)
        self.fn = fn

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as exc:  # noqa: BLE001 - reported to the user by whoever started the job
            self.failed.emit(one_line(exc), traceback.format_exc())
        else:
            self.done.emit(result)
