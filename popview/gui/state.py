"""The window's shared state: what is open and what is selected.

Every pane reads from and writes to one AppState; panes never talk to
each other directly. Selection flows metric -> call path -> location, as
in Cube; the focus of analysis drives the Advisor and metric panes.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from popview.analysis.focus import Focus


class AppState(QObject):
    experimentsChanged = Signal()                 # list of open experiments changed
    currentExperimentChanged = Signal(object)     # Experiment | None
    focusChanged = Signal(object)                 # Focus
    metricSelected = Signal(str)                  # metric id
    callpathSelected = Signal(int)                # call-path id in the current profile (-1 none)
    locationSelected = Signal(int)                # location index (-1 none)
    timeWindowChanged = Signal(object, object)    # t0, t1 in ns (the timeline's visible window)
    valueModeChanged = Signal(str)                # absolute | percent_root | percent_selection | difference
    annotationsChanged = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.experiments: list = []
        self.current = None
        self.focus: Focus = Focus.whole()
        self.metric: str = "time"
        self.callpath: int = -1
        self.location: int = -1
        self.value_mode: str = "absolute"
        self.reference = None                      # Experiment used for "difference" mode
        self.session = None                        # popview.session model, when bound

    # ---- mutations that emit -------------------------------------------
    def add_experiment(self, exp) -> None:
        self.experiments.append(exp)
        self.experimentsChanged.emit()
        if self.current is None:
            self.set_current(exp)

    def remove_experiment(self, exp) -> None:
        if exp in self.experiments:
            self.experiments.remove(exp)
            if self.current is exp:
                self.set_current(self.experiments[0] if self.experiments else None)
            self.experimentsChanged.emit()
            exp.close()

    def set_current(self, exp) -> None:
        if exp is not self.current:
            self.current = exp
            self.callpath = -1
            self.location = -1
            self.currentExperimentChanged.emit(exp)

    def set_focus(self, focus: Focus) -> None:
        if focus != self.focus:
            self.focus = focus
            self.focusChanged.emit(focus)

    def select_metric(self, metric_id: str) -> None:
        if metric_id != self.metric:
            self.metric = metric_id
            self.metricSelected.emit(metric_id)

    def select_callpath(self, cp: int) -> None:
        if cp != self.callpath:
            self.callpath = cp
            self.callpathSelected.emit(cp)

    def select_location(self, loc: int) -> None:
        if loc != self.location:
            self.location = loc
            self.locationSelected.emit(loc)

    def set_value_mode(self, mode: str) -> None:
        if mode != self.value_mode:
            self.value_mode = mode
            self.valueModeChanged.emit(mode)
