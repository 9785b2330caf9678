"""File > Compare runs: the difference, mean or merge of the runs picked in the
Experiments pane, computed in the background (popview.combined) and opened as
an experiment like any other.

The result is a profile written under the cache folder (`results/`), so the
session keeps it as it keeps any run. It says what it is the result of; its
Advisor shows what the algebra leaves meaningful (popview.analysis.
algebra_meaning): a difference's metrics are its two runs' difference, which
the window computes from the runs it has open.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from popview import combined
from popview.analysis import algebra_meaning
from popview.analysis.algebra import AlgebraError
from popview.cache.location import user_cache_dir
from popview.gui.jobs import Lane

log = logging.getLogger("popview.gui")

COLLAPSE = (("none", "Refuse (the same locations are needed)"),
            ("process", "Combine one value per process"),
            ("run", "Combine whole runs (one value per run)"))
OPERATIONS = (("difference", "&Difference (current - other picked run)"),
              ("mean", "&Mean of the picked runs"),
              ("merge", "Me&rge the picked runs (their metrics together)"))


def results_dir(cache_dir=None) -> Path:
    """Where the window writes algebra results (kept: a session names them)."""
    return Path(cache_dir or user_cache_dir()) / "results"


def _key(path) -> str:
    return os.path.normcase(os.path.abspath(path))


class CompareRuns(QObject):
    """The Compare runs menu and its background work; one per window."""

    def __init__(self, window):
        super().__init__(window)
        self.window, self.state = window, window.state
        self.lane = Lane(self, "combining runs")
        self.pending: dict[str, list] = {}       # result path -> the runs it was made from
        self.errors: list[str] = []
        self.menu = QMenu("&Compare runs", window)
        self.actions: dict[str, QAction] = {}
        act = self.menu.addAction("&Side by side (current and other picked run)...")
        act.triggered.connect(lambda _checked=False: self.side_by_side())
        self.actions["side"] = act
        self.menu.addSeparator()
        for op, text in OPERATIONS:
            act = self.menu.addAction(text)
            act.triggered.connect(lambda _checked=False, o=op: self.run(o))
            self.actions[op] = act
        self.views: list = []                    # compare views open
        self.menu.addSeparator()
        shapes = self.menu.addMenu("Runs of different &shapes")
        self.collapse_group = QActionGroup(self)
        self.collapse = "none"
        for key, text in COLLAPSE:
            act = shapes.addAction(text)
            act.setCheckable(True)
            act.setChecked(key == self.collapse)
            act.triggered.connect(lambda _checked=False, k=key: setattr(self, "collapse", k))
            self.collapse_group.addAction(act)
        self.menu.aboutToShow.connect(self._enable)
        self.state.experimentsChanged.connect(self._attach_sources)
        self.state.experimentsChanged.connect(self._close_views_of_closed_runs)

    # ---- which runs -------------------------------------------------------
    def picked(self) -> list:
        """The runs picked in the Experiments pane (the current run first), else the current one."""
        runs = [e for e in getattr(self.state, "picked", []) if e in self.state.experiments]
        cur = self.state.current
        if cur in runs:
            runs.remove(cur)
            runs.insert(0, cur)
        return runs or ([cur] if cur is not None else [])

    def why_not(self, operation: str, runs: list) -> str | None:
        if operation in ("difference", "side") and len(runs) != 2:
            return f"pick two runs for a difference (picked: {len(runs)}); the current one is A"
        if len(runs) < 2:
            return f"pick at least two runs for a {operation} (ctrl-click in the Experiments pane)"
        return None

    def _enable(self) -> None:
        runs = self.picked()
        for op, act in self.actions.items():
            why = self.why_not(op, runs)
            act.setEnabled(why is None)
            act.setToolTip(why or "")

    def side_by_side(self, runs: list | None = None):
        """The compare view of two runs (the current one is A); returns it."""
        runs = list(runs) if runs is not None else self.picked()
        why = self.why_not("side", runs)
        if why:
            self._tell(why)
            return None
        from popview.gui.compare import CompareView
        view = CompareView(runs[0], runs[1], self.window)      # a window of its own, closed with this one
        view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.views.append(view)
        view.destroyed.connect(lambda _o=None, v=view: self.views.remove(v) if v in self.views else None)
        view.show()
        return view

    # ---- computing ----------------------------------------------------------
    def run(self, operation: str, runs: list | None = None, collapse: str | None = None) -> None:
        runs = list(runs) if runs is not None else self.picked()
        collapse = collapse or self.collapse
        why = self.why_not(operation, runs)
        if why:
            self._tell(why)
            return
        folder = results_dir(getattr(self.window, "cache_dir", None))
        self._tell(f"Computing the {operation} of {', '.join(e.name for e in runs)}...", error=False)
        def job():
            try:
                return combined.write_result(operation, runs, folder, collapse)
            except AlgebraError as exc:          # a refusal that says what to do, not a failure
                return exc
        self.lane.submit(job, lambda path, error: self._written(runs, path, error))

    def _written(self, runs, path, error) -> None:
        if isinstance(path, AlgebraError):
            error = str(path)
        if error is not None:
            hint = (" (File > Compare runs > Runs of different shapes)" if "collapse" in error
                    and self.collapse == "none" else "")
            self._tell(f"Could not combine the runs: {error.splitlines()[0]}{hint}")
            return
        log.info("wrote %s", path)
        self.pending[_key(path)] = runs
        self.state.request_open([path])

    def _close_views_of_closed_runs(self) -> None:
        """A compare view goes with either of its runs (their data are closed)."""
        for view in list(self.views):
            if view.a not in self.state.experiments or view.b not in self.state.experiments:
                view.close()

    def _attach_sources(self) -> None:
        """A result that arrives is given the open runs it was made from (its Advisor subtracts
        their metrics); one the window just computed becomes the current run."""
        open_runs = {_key(e.source): e for e in self.state.experiments}
        for exp in list(self.state.experiments):
            info = algebra_meaning.algebra_info(exp)
            if info is None or algebra_meaning.sources_given(exp):
                continue
            runs = self.pending.pop(_key(exp.source), None)
            computed_here = runs is not None
            if runs is None:
                found = [open_runs.get(_key(p)) for p in info.get("sources") or []]
                runs = found if found and all(found) else None
            if runs is not None and all(r in self.state.experiments for r in runs):
                algebra_meaning.set_sources(exp, runs)
                if computed_here and exp is not self.state.current:
                    self.state.set_current(exp)

    def _tell(self, message: str, error: bool = True) -> None:
        if error:
            self.errors.append(message)
            log.warning("%s", message)
        self.window.statusBar().showMessage(message, 8000)
