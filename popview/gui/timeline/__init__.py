"""The timeline pane: Paraver-style rows of locations over time."""
from popview.gui.timeline.pane import TimelinePane

__all__ = ["TimelinePane"]
