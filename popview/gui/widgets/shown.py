"""Work a hidden pane puts off until it shows (a tab behind another, a closed dock).

Opening a run told every pane at once, the GUI thread laying out and filling panes no one
could see (the Histograms behind the Advisor's tab: a table built on a lane, then 30 ms of
the GUI thread's), while the visible ones waited."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer


class WhenShown(QObject):
    """Calling it runs `work` now when `widget` is visible, else once it shows (one run for
    any number of calls meanwhile)."""

    def __init__(self, widget, work):
        super().__init__(widget)
        self.widget, self.work = widget, work
        self.pending = False
        widget.installEventFilter(self)

    def __call__(self, *_signal_args) -> None:
        if self.widget.isVisible():
            self.pending = False
            self.work()
        else:
            self.pending = True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.widget and event.type() == QEvent.Type.Show and self.pending:
            self.pending = False
            QTimer.singleShot(0, self.widget, self._run_if_shown)
        return False

    def _run_if_shown(self) -> None:
        if self.widget.isVisible():
            self.work()
        else:                       # hidden again before its turn
            self.pending = True
