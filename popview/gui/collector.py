"""Python's cyclic garbage collection, run in the GUI thread only.

Python collects reference cycles in whichever thread happens to allocate
when a threshold is crossed. In the window that is often a conversion or an
Advisor worker; a cycle holding a Qt object that lives in the GUI thread (a
closed pane and its timers) was then destroyed from the worker, and the GUI
thread's next timer event went to a freed object: a segmentation fault in
QTimerInfoList::activateTimers while runs were opening. So, while a Qt
application runs popview's window, automatic collection is off and a timer
in the GUI thread collects instead, generation by generation, whenever
Python's own thresholds say it would have. Code without a window (the
command line, a notebook) keeps Python's default.
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 500


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject):
        super().__init__(parent)
        self._timer = QTimer(self, interval=INTERVAL_MS)
        self._timer.timeout.connect(self.collect_due)
        gc.disable()
        self._timer.start()

    def collect_due(self) -> None:
        """Collect the generations whose allocation counts passed their thresholds."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[0] > thresholds[0]:
            gc.collect(0)
            if counts[1] > thresholds[1]:
                gc.collect(1)
                if counts[2] > thresholds[2]:
                    gc.collect(2)

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()


def uninstall() -> None:
    """Back to Python's automatic collection (the application's collector stopped and gone)."""
    app = QCoreApplication.instance()
    found = app.findChild(GuiThreadCollector) if app is not None else None
    if found is not None:
        found.stop()
        found.setParent(None)
        found.deleteLater()
    gc.enable()


def install() -> GuiThreadCollector:
    """The application's collector (made once; call from the GUI thread with a Qt application)."""
    app = QCoreApplication.instance()
    found = app.findChild(GuiThreadCollector)
    return found if found is not None else GuiThreadCollector(app)
