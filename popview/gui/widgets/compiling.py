"""The first run's compiles, as the panes that wait on them say them.

On a new machine numba compiles popview's kernels at their first use, in the
threads and processes that need them (never the GUI thread's business): about a
minute of CPU, minutes on a loaded machine. A pane whose figures wait for them
(the Scaling table, the Advisor) said only "calculating..."; it now says what
is happening, how far it is and roughly how long is left.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

QUIET_MS = 5000          # no compile for this long: the compiling is over (or paused)
MIN_RATE_KERNELS, MIN_RATE_S = 15, 15.0   # the rate is trusted after this many compiles and seconds
ABOUT = "about a minute"  # before the rate is known (15-25 s of CPU on an idle 2-core machine, more when loaded)


ANALYSIS_MODULES = ("popview.analysis.", "popview.cache.chunk_reads")
"""Whose kernels the waiting panes wait for: the analysis's, and the cache reads it reads its
tables through. The rest of the window's first run (reading and converting the trace, the
timeline's overview and pictures) compiles too, in its own threads, for other panes."""


def needed_kernels() -> list[str]:
    """The compiles the Scaling table and the Advisor wait for on a first run, one entry a
    compile (a kernel compiled for two argument types twice), named as firstuse.watch_compiles
    names them: the window's kernels (popview/resources/kernels.json) of ANALYSIS_MODULES.
    About 20 of the window's 67: "12 of about 67 done" counted the conversion's as well, and
    the panes were ready long before 67."""
    from popview.precompile import manifest

    return [f"{module.removeprefix('popview.')}.{function}" for module, function, *_ in manifest().get("window", [])
            if module.startswith(ANALYSIS_MODULES)]


class CompileProgress(QObject):
    """Counts the compiles of popview's kernels (this process's and those relayed from its
    helper processes); `changed` when one is seen and when they stop."""

    changed = Signal()
    _compiled = Signal(str, int, int)     # emitted in the compiling thread, delivered in the GUI thread

    def __init__(self, parent=None, expected: int | None = None, needed=None):
        """`needed`: the kernels counted (names as firstuse.watch_compiles gives them; by default
        needed_kernels(), whose number is `expected`); None with `expected` given: every compile."""
        from popview.firstuse import watch_compiles

        super().__init__(parent)
        self.done = self.started = 0            # of the needed kernels: what the text counts
        self._all = (0, 0)                      # every compile (done, started): one under way keeps the note
        self.compiling = False
        if expected is None:
            needed = needed_kernels() if needed is None else needed
            expected = len(needed)
        self.needed = None if needed is None else frozenset(needed)
        self.expected = expected
        self._first: float | None = None
        self._quiet = QTimer(self, singleShot=True, interval=QUIET_MS)
        self._quiet.timeout.connect(self._quieted)
        self._compiled.connect(self._seen)
        stop = watch_compiles(self._announce)
        self.destroyed.connect(lambda *_: stop())

    def _announce(self, kernel: str, done: int, started: int) -> None:
        try:
            self._compiled.emit(kernel, done, started)
        except RuntimeError:            # gone with the application: a compile must never fail for it
            pass

    @Slot(str, int, int)   # a declared slot: compiles are told from other threads (PYSIDE-3124)
    def _seen(self, kernel: str, done: int, started: int) -> None:
        now = time.monotonic()
        if self._first is None:
            self._first = now
        ended = done > self._all[0]
        self._all = (done, started)
        if self.needed is None:
            self.done, self.started = done, started
        elif kernel in self.needed:
            if ended:
                self.done += 1
            else:
                self.started += 1
        self.compiling = True
        self._quiet.start()
        self.changed.emit()

    @Slot()
    def _quieted(self) -> None:
        """No compile began or ended for a while: over, unless one is still under way (a big
        kernel takes longer than QUIET_MS on a loaded machine: "calculating..." came back)."""
        if self.started > self.done or self._all[1] > self._all[0]:
            self._quiet.start()
            return
        self.compiling = False
        self.changed.emit()

    def left(self) -> str:
        """Roughly how long the rest takes: 'about a minute' until a few compiles give the rate."""
        total = max(self.expected, self.done + 1)
        elapsed = time.monotonic() - self._first if self._first is not None else 0.0
        if self.done < MIN_RATE_KERNELS or elapsed < MIN_RATE_S:     # the first, small ones come fast
            return ABOUT
        seconds = elapsed / self.done * (total - self.done)
        if seconds >= 90:
            return f"about {round(seconds / 60)} min left"
        return f"about {max(10, int(round(seconds / 10)) * 10)} s left"

    def text(self) -> str:
        """'' while nothing compiles; else what is happening, how far and how long."""
        if not self.compiling:
            return ""
        total = max(self.expected, self.done + 1)
        return (f"compiling the analysis kernels (first run on this machine only, {self.left()}): "
                f"{self.done} of about {total} done")


_progress: list[CompileProgress] = []


def progress() -> CompileProgress:
    """The application's one CompileProgress (made at first use)."""
    if not _progress:
        _progress.append(CompileProgress(QCoreApplication.instance()))
    return _progress[0]


def waiting_text(what: str) -> str:
    """`what` ("calculating") as a pane says it while it waits: with the compiles when some run."""
    doing = progress().text()
    return f"{what}: {doing}…" if doing else f"{what}…"
