"""The compare view: run A and run B side by side.

- the metric, call and system trees of each run (the window's own panes, each
  side with its own AppState): A's values are A - B, coloured on the trees'
  diverging scale (blue less than B, red more); B's are its own; a selection
  on one side selects the same metric, call path and location on the other;
- the Advisor of both runs with a delta column (advisor_delta.py);
- both timelines, zooming and panning together (timelines.py), when both runs
  are traces.
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from popview.gui.compare.advisor_delta import AdvisorDelta
from popview.gui.compare.changed import ChangedMost
from popview.gui.compare.sides import SelectionLink, side_state
from popview.gui.compare.timelines import LinkedTimelines
from popview.gui.trees import CallTreePane, MetricTreePane, SystemTreePane
from popview.gui.widgets.builds import CANCELLED, PaneBuilds, overview_ready


class Side(QWidget):
    """One run's three coupled trees under a title."""

    def __init__(self, state, title: str, parent=None):
        super().__init__(parent)
        self.state = state
        self.title = QLabel(title, self)
        self.title.setWordWrap(True)
        # half a window wide: metric | call tree above, the system tree below them
        split = QSplitter(Qt.Orientation.Vertical, self)
        top = QSplitter(Qt.Orientation.Horizontal, split)
        self.metric = MetricTreePane(state, top)
        self.call = CallTreePane(state, top)
        top.addWidget(self.metric)
        top.addWidget(self.call)
        top.setSizes([2, 3])
        self.system = SystemTreePane(state, split)
        split.addWidget(top)
        split.addWidget(self.system)
        split.setSizes([3, 2])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        lay.addWidget(split, 1)


class TimelinesPlace(QWidget):
    """Where the linked timelines go: made at once when both runs' timeline overviews are
    open (or cannot be written: each then says why), else once their builds end, each on
    a lane of its own with its progress and Cancel here (PaneBuilds): never built in the
    GUI thread, where the timelines draw (a run converted by `popview convert` has none yet)."""

    def __init__(self, a, b, parent=None):
        super().__init__(parent)
        self.runs = (a, b)
        self.timelines: LinkedTimelines | None = None
        self.message = QLabel(self, wordWrap=True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.addWidget(self.message, 1)
        self.builds = PaneBuilds(self, self.box, "timeline overview", self._built)
        self._failed: str | None = None
        waiting = [e for e in dict.fromkeys(self.runs) if not overview_ready(e)]
        if not waiting:
            self._make()
            return
        self.message.setText("Building the timeline overview of "
                             + " and ".join(escape(e.name) for e in waiting) + "…")
        for exp in waiting:
            self.builds.start(exp, exp.prepare_timeline)

    def _make(self) -> None:
        self.timelines = LinkedTimelines(*self.runs, self)
        self.message.hide()
        self.box.insertWidget(0, self.timelines, 1)

    def _built(self, exp, result, error) -> None:
        if result == CANCELLED:
            self._failed = self._failed or f"building the timeline overview of {escape(exp.name)} was cancelled"
        elif error is not None:
            self._failed = self._failed or (f"the timeline overview of {escape(exp.name)} could not be built "
                                            f"({escape(error.splitlines()[0])})")
        if self.builds:
            return
        if self._failed is None and all(overview_ready(e) for e in self.runs):
            self._make()
        else:
            self.message.setText(f"No timelines: {self._failed}.")

    def shutdown(self) -> None:
        self.builds.cancel_all_but(set())
        if self.timelines is not None:
            self.timelines.shutdown()


class CompareView(QWidget):
    def __init__(self, a, b, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        self.a, self.b = a, b
        self.setWindowTitle(f"popview: compare {a.name} (A) with {b.name} (B)")
        self.states = [side_state(a, b, self, difference=True), side_state(b, a, self, difference=False)]
        self.sides = [Side(self.states[0], f"<b>A</b>: {escape(a.name)} ({escape(a.label)}) &mdash; values are "
                                           f"A - B: <span style='color:#c03030'>red</span> more than B, "
                                           f"<span style='color:#2060c0'>blue</span> less", self),
                      Side(self.states[1], f"<b>B</b>: {escape(b.name)} ({escape(b.label)}) &mdash; its own "
                                           "values", self)]
        self.link = SelectionLink(*self.states)
        for state, exp in zip(self.states, (a, b)):
            state.set_current(exp, picked=False)        # the panes load their run
        split = QSplitter(Qt.Orientation.Vertical, self)
        self.place = None
        self.note = QLabel(self)
        if a.is_trace and b.is_trace:
            self.place = TimelinesPlace(a, b, split)
            split.addWidget(self.place)
        else:
            self.note.setText("No timelines: " + ("neither run is a trace" if not (a.is_trace or b.is_trace)
                                                  else "one run is a profile, without records"))
        trees = QSplitter(Qt.Orientation.Horizontal, split)
        for side in self.sides:
            trees.addWidget(side)
        split.addWidget(trees)
        bottom = QSplitter(Qt.Orientation.Horizontal, split)
        self.advisor = AdvisorDelta(a, b, bottom)
        self.changed = ChangedMost(a, b, parent=bottom)
        self.changed.callpathChosen.connect(self.show_callpath)
        bottom.addWidget(self.advisor)
        bottom.addWidget(self.changed)
        split.addWidget(bottom)
        split.setSizes([3, 6, 3] if self.place else [7, 3])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        if self.note.text():
            lay.addWidget(self.note)
        else:
            self.note.hide()
        lay.addWidget(split)
        self.resize(1500, 950)

    @property
    def timelines(self) -> LinkedTimelines | None:
        """Both timelines, linked; None without them (a profile) or while their overviews build."""
        return self.place.timelines if self.place is not None else None

    def show_callpath(self, cp_a: int, cp_b: int) -> None:
        """Select a call path on both sides (each run's own; -1 where it has none)."""
        for side, cp in zip(self.sides, (cp_a, cp_b)):
            if cp >= 0:
                side.call.select_node(cp)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self.place is not None:
            self.place.shutdown()
        super().closeEvent(event)
