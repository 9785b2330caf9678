"""Opening experiments off the GUI thread, with progress and cancel.

An OpenJob runs `popview.open(path, progress=..., cancel=...)` and warms the
experiment's profile, on the application's opening pool (popview.gui.jobs).
It does not build the trace's timeline overview (popview.cache.overview): the
run appears once its cache is open, and the Timeline pane builds the overview
it lacks on a lane of its own, with its progress and Cancel (6-10 s at 1 GB).
The GUI thread only receives signals, so the window stays responsive;
cancelling sets the threading.Event the core checks at each progress report.
"""
from __future__ import annotations

import threading
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

import popview
from popview.cache.progress import Cancelled
from popview.failures import one_line
from popview.gui.jobs import OPENING, Lane
from popview.readers.errors import InputError


def warm_profile(exp) -> None:
    """Load the experiment's profile and its totals now, in the worker, not in the GUI thread."""
    from popview.gui.trees.source import profile_values

    pv = profile_values(exp)
    if pv is not None and pv.first_metric() is not None:
        pv.callpath_values(pv.first_metric())
        for key in pv.roots():
            pv.total(key)


class OpenJob(QObject):
    """One file being opened, on the application's opening pool. Signals arrive in the GUI thread."""

    progressed = Signal(float, str)     # fraction 0..1, message
    opened = Signal(object)             # Experiment
    failed = Signal(str, str)           # message naming the file, details (traceback)
    cancelled = Signal()
    finished = Signal()                 # after any of the three outcomes

    def __init__(self, path, opener=None, cache_dir=None, series: str | None = None, parent=None):
        super().__init__(parent)
        self.path = Path(path)
        self.series = series
        self.opener, self.cache_dir = opener or popview.open, cache_dir
        self.started = False
        self._ended = threading.Event()          # the work is over (or never started)
        self._answered = False
        self._job = None
        self._lane = Lane(self, f"opening {self.path.name}", OPENING)
        self._lane.progressed.connect(self.progressed)

    def start(self) -> None:
        self.started = True
        self._job = self._lane.submit(self._open, self._arrived)

    def cancel(self) -> None:
        """Stop the work; a job still waiting for its turn ends at once."""
        if self._job is not None:
            self._job.cancel.set()
        if not self.started or self._lane.stop():
            self.started = True
            self._ended.set()
            QTimer.singleShot(0, self._on_cancelled)

    @property
    def is_cancelled(self) -> bool:
        return self._job is not None and self._job.cancel.is_set()

    def wait(self, ms: int = 30000) -> bool:
        return not self.started or self._ended.wait(ms / 1000)

    def _open(self, job):
        """In the pool: ("opened", exp), ("cancelled", None) or ("failed", (message, details))."""
        try:
            exp = self.opener(self.path, cache_dir=self.cache_dir, progress=job.progress, cancel=job.cancel)
            try:
                if job.cancel.is_set():
                    raise Cancelled("cancelled by the user")
                warm_profile(exp)
            except Cancelled:
                exp.close()
                raise
            return "opened", exp
        except Cancelled:
            return "cancelled", None
        except InputError as exc:
            return "failed", (str(exc), traceback.format_exc())
        except Exception as exc:  # noqa: BLE001 - any failure must reach the user, not kill the thread
            return "failed", (f"{self.path}: {one_line(exc)}", traceback.format_exc())
        finally:
            self._ended.set()

    def _arrived(self, outcome, error) -> None:
        if error is not None:
            self._report("failed", (f"{self.path}: {error.splitlines()[0]}", error))
        else:
            self._report(*outcome)

    def _report(self, kind: str, value) -> None:
        if self._answered:
            return
        self._answered = True
        if kind == "opened" and self.is_cancelled:      # cancelled after the work finished: drop it
            value.close()
            kind = "cancelled"
        if kind == "opened":
            self.opened.emit(value)
        elif kind == "failed":
            self.failed.emit(*value)
        else:
            self.cancelled.emit()
        self.finished.emit()

    def _on_cancelled(self) -> None:
        self._report("cancelled", None)
