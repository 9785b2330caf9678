"""The Advisor: POP efficiency metrics of the focus of analysis (a dock pane)."""
from popview.gui.advisor.pane import AdvisorPane

__all__ = ["AdvisorPane"]
