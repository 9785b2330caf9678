"""The compare view: two runs side by side (trees, Advisor with a delta column,
linked timelines). `CompareView(a, b)` is a window of its own."""
from popview.gui.compare.view import CompareView

__all__ = ["CompareView"]
