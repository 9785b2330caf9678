"""A pane made alone for a test: its own AppState, closed with the test, shown at a size."""
from __future__ import annotations

from popview.gui.state import AppState


def pane_alone(qtbot, pane_class, size: tuple[int, int] | None = None):
    """(state, pane): a new AppState and pane_class(state), closed with the test (qtbot);
    resized to `size` (width, height) and shown when given."""
    state = AppState()
    pane = pane_class(state)
    qtbot.addWidget(pane)
    if size is not None:
        pane.resize(*size)
        pane.show()
    return state, pane
