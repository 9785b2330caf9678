"""Intervals to mark on the timeline (e.g. a histogram cell's records).

Panes talk through the AppState only: the channel is a child QObject of the
AppState, created by whichever pane asks first."""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class HighlightChannel(QObject):
    intervals = Signal(object, object)     # experiment, (loc, begin, end) arrays (empty: clear)


def channel(state) -> HighlightChannel:
    found = state.findChild(HighlightChannel)
    return found if found is not None else HighlightChannel(state)
