"""Two timelines, one above the other, that zoom and pan together: on relative
time (the same share of each run), on the time since each run's start, or on
the same iteration (popview.analysis.iteration_link, computed in the background)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from popview.analysis import iteration_link
from popview.gui.jobs import Lane
from popview.gui.timeline.view import TimelineView

RELATIVE, SECONDS, ITERATION = "relative", "seconds", "iteration"


class LinkedTimelines(QWidget):
    def __init__(self, a, b, parent=None):
        super().__init__(parent)
        self.views = [TimelineView(a), TimelineView(b)]
        self.link = RELATIVE
        self._busy = False
        self.choice = QComboBox(self)
        self.choice.addItem("linked on relative time (the same share of each run)", RELATIVE)
        self.choice.addItem("linked on the time since each run's start", SECONDS)
        self.choice.addItem("linked on the same iteration", ITERATION)
        self.choice.currentIndexChanged.connect(lambda _i: self.set_link(self.choice.currentData()))
        self.iterations = None           # IterationLink, once computed
        self.lane = Lane(self, "compare: iterations")
        self.why = QLabel(self)
        top = QHBoxLayout()
        top.addWidget(QLabel("Timelines", self))
        top.addWidget(self.choice)
        top.addWidget(self.why, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        for view, label in zip(self.views, ("A", "B")):
            box = QWidget(split)
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(0)
            lay.addWidget(QLabel(f"<b>{label}</b>: {view.exp.name}", box))
            lay.addWidget(view, 1)
            split.addWidget(box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(split, 1)
        for i, view in enumerate(self.views):
            view.vb.sigRangeChanged.connect(lambda *_a, i=i: self._follow(i))

    def set_link(self, link: str) -> None:
        if link == ITERATION and self.iterations is None:
            a, b = (v.exp for v in self.views)
            self.why.setText("finding the iterations...")
            self.lane.submit(lambda: iteration_link.link(a, b), self._linked)
            return
        self.link = link
        self._follow(0)

    def _linked(self, result, error) -> None:
        if error is not None:
            self.why.setText(f"no iteration link: {error.splitlines()[0]}; linked on relative time")
            self.choice.setCurrentIndex(self.choice.findData(RELATIVE))
            return
        self.iterations = result
        self.why.setText(f"iterations: visits of {result.path.rsplit('/', 1)[-1]} ({result.shared} shared)")
        self.set_link(ITERATION)

    def counterpart(self, i: int, t0: float, t1: float) -> tuple[float, float]:
        """The window of the other timeline that matches [t0, t1] on timeline i."""
        src, dst = self.views[i], self.views[1 - i]
        if self.link == SECONDS:
            return t0, t1
        if self.link == ITERATION and self.iterations is not None:
            m = self.iterations.a_to_b if i == 0 else self.iterations.b_to_a
            return float(m(t0)), float(m(t1))
        scale = dst.data.t_end / src.data.t_end if src.data.t_end else 1.0
        return t0 * scale, t1 * scale

    def _follow(self, i: int) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            (t0, t1), _ = self.views[i].vb.viewRange()
            self.views[1 - i].set_window(*self.counterpart(i, t0, t1), record=False)
        finally:
            self._busy = False

    def shutdown(self) -> None:
        for v in self.views:
            v.shutdown()
