"""Floating panes restored from a saved window state, made safe.

A saved state can float a pane where it hides the window (a large Advisor over
everything) or where no screen shows it (saved on a monitor since unplugged). On
restore such a pane is docked back; a small floating pane the user put on a screen
stays floating, moved wholly onto that screen.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QGuiApplication

COVER_SHARE = 0.25
"""A floating pane over more than this share of the window hides it: docked back."""


def repair_floating(window) -> list[str]:
    """Dock back each floating pane that hides the window or that no screen shows;
    clamp the others to their screen. Returns the titles of the panes docked back."""
    docked = []
    for title, dock in window.docks.items():
        if not dock.isFloating():
            continue
        frame = dock.frameGeometry()
        room = _screen_room(frame)
        if room is None or _too_big(frame, room) or _covers(frame, window.frameGeometry()):
            _dock_back(window, dock)
            docked.append(title)
        else:
            dock.move(_clamped(frame, room).topLeft() + (dock.pos() - frame.topLeft()))
    return docked


def _screen_room(frame: QRect) -> QRect | None:
    """The free room of the screen showing the pane's centre (None: on no screen)."""
    for screen in QGuiApplication.screens():
        room = screen.availableGeometry()
        if room.contains(frame.center()):
            return room
    return None


def _too_big(frame: QRect, room: QRect) -> bool:
    return frame.width() > room.width() or frame.height() > room.height()


def _covers(frame: QRect, window: QRect) -> bool:
    overlap = frame.intersected(window)
    area = window.width() * window.height()
    return area > 0 and overlap.width() * overlap.height() > COVER_SHARE * area


def _clamped(frame: QRect, room: QRect) -> QRect:
    x = min(max(frame.x(), room.x()), room.right() + 1 - frame.width())
    y = min(max(frame.y(), room.y()), room.bottom() + 1 - frame.height())
    return QRect(x, y, frame.width(), frame.height())


def _dock_back(window, dock) -> None:
    """Back to its docked place (in front, if among tabs: it was in sight); to the bottom
    area when the saved state knew none."""
    dock.setFloating(False)
    if window.dockWidgetArea(dock) == Qt.DockWidgetArea.NoDockWidgetArea:
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    if not dock.isHidden():
        QTimer.singleShot(0, dock, dock.raise_)     # once laid out: raised before, its tab stayed behind
