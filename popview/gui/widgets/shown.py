"""Work a pane out of sight puts off until it shows (a tab behind another's, a closed dock).

Opening a run told every pane at once, the GUI thread laying out and filling panes no one
could see (the Histograms behind the Advisor's tab: a table built on a lane, then 30 ms of
the GUI thread's; the Topology behind the System tree's: 50 ms), while the visible ones
waited. A dock tabbed behind another stays "visible" to Qt (moved out of the window's
sight): the pane's visible region tells, and its dock's visibilityChanged says when its tab
comes to the front."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QDockWidget


def in_sight(widget) -> bool:
    """Shown, and some of it within its window (not behind another dock's tab)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


class WhenShown(QObject):
    """Calling it runs `work` now when `widget` is in sight, else once it comes into sight (one
    run for any number of calls meanwhile)."""

    def __init__(self, widget, work):
        super().__init__(widget)
        self.widget, self.work = widget, work
        self.pending = False
        self._dock = None
        widget.installEventFilter(self)
        self._follow_dock()

    def __call__(self, *_signal_args) -> None:
        if in_sight(self.widget):
            self.pending = False
            self.work()
        else:
            self.pending = True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.widget:
            if event.type() == QEvent.Type.ParentChange:
                self._follow_dock()
            elif event.type() == QEvent.Type.Show:
                self._soon()
        return False

    def _follow_dock(self) -> None:
        """The dock the widget is in: its tab coming to the front shows the widget."""
        parent = self.widget.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not self._dock:
            if self._dock is not None:
                self._dock.visibilityChanged.disconnect(self._dock_shown)
            self._dock = parent
            if parent is not None:
                parent.visibilityChanged.connect(self._dock_shown)

    def _dock_shown(self, visible: bool) -> None:
        if visible:
            self._soon()

    def _soon(self) -> None:
        if self.pending:
            QTimer.singleShot(0, self.widget, self._run_if_in_sight)

    def _run_if_in_sight(self) -> None:
        if self.pending and in_sight(self.widget):
            self.pending = False
            self.work()
