"""The window's one way to run work off the GUI thread.

Every pane hands its computations to a `Lane`: a line of work in which each
new request supersedes the previous one (the user clicks through call paths
faster than the engine answers). A request still queued when a newer one
comes is dropped before it starts; a running one finishes, and its answer is
dropped on arrival. Answers and errors come back in the GUI thread; an error
also goes to the log pane with its traceback. Work runs in two long-lived
thread pools of the application: `OPENING` (conversions: few at once, for
memory and cores) and `ANALYSIS` (everything else). No work runs on the GUI
thread, whatever its size; tests wait for a lane with `wait()`.

Each job gets a `Job` handle: its cancel flag (set by `Lane.cancel()` and by
a newer request) and `progress(fraction, message)`, reported to the lane's
`progressed` signal.
"""
from __future__ import annotations

import inspect
import logging
import queue
import threading
import traceback
from collections import deque

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, QThreadPool, Signal, Slot

from popview.failures import one_line

log = logging.getLogger("popview.gui")

OPENING, ANALYSIS = "opening", "analysis"
_THREADS = {OPENING: 2, ANALYSIS: 2}
_pools: dict[str, QThreadPool] = {}


def pool(name: str) -> QThreadPool:
    """The application's pool `name`, made on first use (it lives as long as the application)."""
    if name not in _pools:
        made = QThreadPool(QCoreApplication.instance())
        made.setMaxThreadCount(_THREADS[name])
        made.setObjectName(f"popview-{name}")
        _pools[name] = made
    return _pools[name]


def idle() -> bool:
    """No work queued or running in any pool."""
    return all(p.waitForDone(0) for p in list(_pools.values()))


def wait_all(ms: int = -1) -> bool:
    """Wait for every pool to empty (closing the window, tests)."""
    return all(p.waitForDone(ms) for p in list(_pools.values()))


class Job:
    """What a running job sees: its cancel flag and its progress report."""

    def __init__(self, report):
        self.cancel = threading.Event()
        self._report = report

    def progress(self, fraction: float, message: str = "") -> None:
        self._report(float(fraction), message)


class _Signals(QObject):
    finished = Signal(int, object, object, str)     # ticket, result, error (one line), details
    progressed = Signal(int, float, str)


# A task's Python object must outlive its run() (QThreadPool reads the task after run()
# returns), whatever becomes of its lane: started tasks are kept here, and freed only
# well after they returned.
_started: set = set()
_returned: "queue.SimpleQueue" = queue.SimpleQueue()
_retired: deque = deque(maxlen=64)


def _keep(task: "_Task") -> None:
    _reap()
    _started.add(task)


def _reap() -> None:
    while True:
        try:
            task = _returned.get_nowait()
        except queue.Empty:
            return
        _started.discard(task)
        _retired.append(task)


class _Task(QRunnable):
    def __init__(self, ticket: int, fn, job: Job, signals: _Signals):
        super().__init__()
        self.setAutoDelete(False)               # Python owns it (see _keep)
        self.ticket, self.fn, self.job, self.signals = ticket, fn, job, signals

    def run(self) -> None:
        try:
            try:
                result, error, details = self.fn(self.job) if _wants_job(self.fn) else self.fn(), None, ""
            except Exception as exc:  # noqa: BLE001 - every failure reaches the pane and the log
                result, error, details = None, one_line(exc), traceback.format_exc()
            try:
                self.signals.finished.emit(self.ticket, result, error, details)
            except RuntimeError:        # the lane was deleted meanwhile: nobody waits for the answer
                pass
        finally:
            _returned.put(self)


def _wants_job(fn) -> bool:
    """fn takes the Job: it has a parameter without a default."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in parameters)


class Lane(QObject):
    """A pane's line of background work: submit(fn, on_done) calls on_done(result, error)
    in the GUI thread for the newest request only. fn takes no argument or a `Job`."""

    progressed = Signal(float, str)

    def __init__(self, parent=None, name: str = "", pool_name: str = ANALYSIS):
        super().__init__(parent)
        self.name = name or type(parent).__name__
        self._pool = pool(pool_name)
        self._ticket = 0
        self._pending: dict[int, tuple[_Task, object]] = {}
        self._signals = _Signals()
        self._signals.finished.connect(self._deliver)
        self._signals.progressed.connect(self._progress)

    def submit(self, fn, on_done) -> Job:
        self._supersede()
        self._ticket += 1
        ticket = self._ticket
        job = Job(lambda f, m: self._signals.progressed.emit(ticket, f, m))
        task = _Task(ticket, fn, job, self._signals)
        self._pending[ticket] = (task, on_done)
        _keep(task)
        self._pool.start(task)
        return job

    def cancel(self) -> None:
        """Drop what is queued, ask what runs to stop; no answer will be delivered."""
        self.stop()
        self._ticket += 1

    def stop(self) -> bool:
        """Drop what is queued and ask what runs to stop, whose answer still comes (it may
        say it was cancelled). True when nothing was running: no answer will come."""
        self._supersede()
        return not self._pending

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def wait(self, ms: int = 60_000) -> bool:
        """Block until this lane's jobs ran and their answers were delivered (tests, closing)."""
        from PySide6.QtCore import QDeadlineTimer, QThread

        deadline = QDeadlineTimer(ms) if ms >= 0 else QDeadlineTimer(QDeadlineTimer.ForeverConstant.Forever)
        while self._pending and not deadline.hasExpired():
            QCoreApplication.processEvents()
            QThread.msleep(5)
        return not self._pending

    def _supersede(self) -> None:
        for ticket, (task, _) in list(self._pending.items()):
            task.job.cancel.set()
            if self._pool.tryTake(task):       # not started: it never will
                del self._pending[ticket]
                _started.discard(task)

    # The two receivers of signals emitted in pool threads are declared slots: PySide6 (6.8 on)
    # crashes on cross-thread deliveries to plain methods (PYSIDE-3124).
    @Slot(int, float, str)
    def _progress(self, ticket: int, fraction: float, message: str) -> None:
        if ticket == self._ticket:
            self.progressed.emit(fraction, message)

    @Slot(int, object, object, str)
    def _deliver(self, ticket: int, result, error, details: str) -> None:
        _reap()
        _, on_done = self._pending.pop(ticket, (None, None))
        if error is not None:
            log.warning("%s: %s\n%s", self.name, error, details)
        if ticket != self._ticket or on_done is None:
            return
        on_done(result, None if error is None else (f"{error}\n{details}" if details else error))
