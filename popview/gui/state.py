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
    openRequested = Signal(object)                # list of paths a pane asks the window to open
    referenceChanged = Signal(object)             # Experiment | None compared against in "difference" mode
    selectionScopeChanged = Signal()              # metric_exclusive / callpath_exclusive changed
    scalingChanged = Signal(str)                  # auto | strong | weak: the user's choice for every view

    def __init__(self, parent=None):
        super().__init__(parent)
        self.experiments: list = []
        self.current = None
        self.focus: Focus = Focus.whole()
        # Strong or weak scaling as the user chose it (Scaling pane), or "auto": guessed over the
        # series (popview.analysis.metrics.decide_scaling). One choice the Advisor and the Scaling
        # pane both follow.
        self.scaling: str = "auto"
        self.metric: str = "time"
        self.callpath: int = -1
        self.location: int = -1
        self.value_mode: str = "absolute"
        self.reference = None                      # Experiment used for "difference" mode
        self.session = None                        # popview.session model, when bound
        self.series: dict = {}                     # Experiment -> series name (runs of one scaling study)
        self.picked: list = []                     # runs picked together in the Experiments pane (to compare)
        # Cube semantics: a selected node that is expanded in its tree stands for its exclusive value.
        self.metric_exclusive: bool = False
        self.callpath_exclusive: bool = False
        # The series whose largest run becomes current as its runs arrive (None: the user picked one).
        self._following: str | None = None

    # ---- mutations that emit -------------------------------------------
    @property
    def current_is_trace(self) -> bool:
        """Whether the current experiment has a timeline (a Cube profile has none)."""
        return self.current is not None and bool(self.current.is_trace)

    def request_open(self, paths) -> None:
        """Ask the window to open files or folders (in its workers)."""
        self.openRequested.emit([str(p) for p in paths])

    def add_experiment(self, exp, series: str | None = None) -> None:
        """Add an opened run. The current run becomes the largest run of a series being
        opened, whatever order the conversions finish in, until the user picks one."""
        if series:
            if series not in self.series.values():
                self._following = series          # a new series: show it
            self.series[exp] = series
        self.experiments.append(exp)
        self.experimentsChanged.emit()
        if self.current is None:
            self.set_current(exp, picked=False)
        elif series and series == self._following and (
                self.series.get(self.current) != series or run_size(exp) > run_size(self.current)):
            self.set_current(exp, picked=False)

    def by_size(self) -> list:
        """The experiments, smallest run first: the order of a scaling series, whatever
        order their conversions finished in."""
        return sorted(self.experiments, key=run_size)

    def remove_experiment(self, exp) -> None:
        if exp in self.experiments:
            self.experiments.remove(exp)
            self.series.pop(exp, None)
            if exp in self.picked:
                self.picked.remove(exp)
            if self.reference is exp:
                self.set_reference(None)
            if self.current is exp:
                self.set_current(self.experiments[0] if self.experiments else None, picked=False)
            self.experimentsChanged.emit()
            exp.close()

    def set_current(self, exp, picked: bool = True) -> None:
        """Make `exp` the run every pane shows; `picked`: the user chose it (stop following a series)."""
        if picked:
            self._following = None
        if exp is not self.current:
            self.current = exp
            self.callpath = -1
            self.location = -1
            self.currentExperimentChanged.emit(exp)

    def set_scaling(self, mode: str) -> None:
        if mode not in ("auto", "strong", "weak"):
            raise ValueError(f"scaling must be auto, strong or weak, not {mode!r}")
        if mode != self.scaling:
            self.scaling = mode
            self.scalingChanged.emit(mode)

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

    def set_reference(self, exp) -> None:
        if exp is not self.reference:
            self.reference = exp
            self.referenceChanged.emit(exp)

    def set_selection_scope(self, metric_exclusive: bool | None = None,
                            callpath_exclusive: bool | None = None) -> None:
        """Whether the selected metric / call path stands for its exclusive value."""
        new = (self.metric_exclusive if metric_exclusive is None else bool(metric_exclusive),
               self.callpath_exclusive if callpath_exclusive is None else bool(callpath_exclusive))
        if new != (self.metric_exclusive, self.callpath_exclusive):
            self.metric_exclusive, self.callpath_exclusive = new
            self.selectionScopeChanged.emit()


def run_size(exp) -> int:
    """Processes x threads of a run (0 when unknown): orders the runs of a series."""
    try:
        p, t = exp.shape()
    except Exception:  # noqa: BLE001 - ordering only
        return 0
    return p * t
