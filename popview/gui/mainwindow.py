"""The main window: every pane in a dock, menus, and opening experiments.

Pane contract
-------------
A pane is listed in PANES as a PaneSpec(module, class name, dock title,
default area, place). The window imports each module; a module that does
not exist yet is skipped, so panes plug in by adding one line. Each pane:

* is a QWidget constructed as ``Cls(state: AppState, parent=None)`` and
  talks to the rest of the window only through the AppState (selection,
  focus, value mode, current experiment, ``state.request_open(paths)``);
* may define ``menu_actions()`` returning ``{menu title: [QAction, ...]}``
  (titles such as "View", "Analysis", "Bookmarks"; a missing menu is
  created before Help) or a plain list, which goes to the View menu;
* is wrapped in a QDockWidget (movable, floatable, closable; its toggle is
  in View > Panes). Layout and window geometry are saved in QSettings.

`place` positions a dock relative to one added before it:
("right", title), ("below", title) or ("tab", title).

A ``.popview`` session file dropped or opened is handed to
``popview.gui.session_binding.open_session(state, path)`` when that module
exists.
"""
from __future__ import annotations

import functools
import importlib
import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QComboBox, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QSizePolicy, QToolBar, QWidget,
)

import popview
from popview.analysis.focus import Focus
from popview import readers
from popview.gui import collector, docking, layouts
from popview.gui.cache_setting import CacheBesideAction
from popview.gui.dask_setting import DaskAction, scheduler
from popview.gui.state import AppState
from popview.gui.widgets.cfgpath import CFG_SUFFIX, ask_cfg_path   # a Paraver view, opened on the current run
from popview.gui.widgets.progress import JobProgress
from popview.gui.workers import OpenJob
from popview.runs import runs_in, series_name
from popview.readers.errors import InputError
from popview.gui.widgets.runtitle import titled
from popview.gui.widgets.units import focus_text

log = logging.getLogger("popview.gui")

Area = Qt.DockWidgetArea


@dataclass(frozen=True)
class PaneSpec:
    module: str
    cls: str
    title: str
    area: Area
    place: tuple[str, str] | None = None


PANES: list[PaneSpec] = [
    PaneSpec("popview.gui.experiments", "ExperimentsPane", "Experiments", Area.LeftDockWidgetArea),
    PaneSpec("popview.gui.bookmarks", "BookmarksPane", "Bookmarks", Area.LeftDockWidgetArea, ("below", "Experiments")),
    PaneSpec("popview.gui.timeline", "TimelinePane", "Timeline", Area.TopDockWidgetArea),
    PaneSpec("popview.gui.trees", "MetricTreePane", "Metrics", Area.BottomDockWidgetArea),
    PaneSpec("popview.gui.advisor", "AdvisorPane", "Advisor", Area.BottomDockWidgetArea, ("below", "Metrics")),
    PaneSpec("popview.gui.scaling", "ScalingPane", "Scaling", Area.BottomDockWidgetArea, ("tab", "Advisor")),
    PaneSpec("popview.gui.logpane", "LogPane", "Log", Area.BottomDockWidgetArea, ("tab", "Advisor")),
    PaneSpec("popview.gui.trees", "CallTreePane", "Call tree", Area.BottomDockWidgetArea, ("right", "Metrics")),
    PaneSpec("popview.gui.trees", "SystemTreePane", "System tree", Area.BottomDockWidgetArea, ("right", "Call tree")),
    # a tab beside the System tree (UI.md's "System | Topology"): stacked under it in the Overview's
    # row of trees, each had some 120 px at 1920x1080 (two system-tree rows, cells 25 px high)
    PaneSpec("popview.gui.topology", "TopologyPane", "Topology", Area.BottomDockWidgetArea, ("tab", "System tree")),
    # the selected metric over locations as a box plot or sorted bars (Cube's system-dimension plugins)
    PaneSpec("popview.gui.distribution", "DistributionPane", "Distribution", Area.BottomDockWidgetArea,
             ("tab", "System tree")),
    PaneSpec("popview.gui.histograms", "HistogramPane", "Histograms", Area.BottomDockWidgetArea, ("tab", "Advisor")),
]

VALUE_MODES = [("absolute", "Absolute"), ("percent_root", "% of total"),
               ("percent_selection", "% of selection"), ("difference", "Difference to reference")]
MAX_RECENT = 10
SESSION_SUFFIX = ".popview"
CFG_PANE_SHARE = 0.4         # a Paraver view's pane takes this share of the window's height...
CFG_PANE_MIN_PX = 320        # ...and at least this much: its timelines and tables need rows


def load_pane_class(spec: PaneSpec):
    """The pane class (imported when the window is built; a missing module is an error naming it)."""
    return getattr(importlib.import_module(spec.module), spec.cls)


class MainWindow(QMainWindow):
    def __init__(self, state: AppState | None = None, settings: QSettings | None = None,
                 cache_dir=None, opener=None, panes: list[PaneSpec] | None = None):
        super().__init__()
        collector.install()                   # cycles are collected in this thread only
        self.state = state or AppState(self)
        self.settings = settings or QSettings("popview", "popview")
        self.cache_dir = cache_dir
        self.opener = opener
        self.jobs: list[OpenJob] = []
        self.errors: list[str] = []           # messages shown to the user, newest last
        self.panes: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self.cfg_panes: list[QWidget] = []     # Paraver views (.cfg) opened on a run
        self._waiting_cfgs: list[Path] = []    # dropped or given before a trace was open
        self.setWindowTitle("popview")
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        # The left column (experiments, bookmarks) runs the full height; timeline and trees share the rest.
        self.setCorner(Qt.Corner.TopLeftCorner, Area.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, Area.LeftDockWidgetArea)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowNestedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        self.setCentralWidget(_slack_taker())
        self.layout_name = layouts.OVERVIEW
        self._build_menus()
        self._build_toolbar()
        specs = [s for s in compact_layout(panes if panes is not None else PANES, self.screen())
                 if self._add_pane(s)]
        # Tabs last: tabbing a dock before the splits are done leaves a stray tab bar (Qt 6.11).
        for spec in sorted(specs, key=lambda s: bool(s.place and s.place[0] == "tab")):
            self._place(spec)
        for title in ("Advisor", "System tree"):     # the metrics are what an analyst comes for
            if title in self.docks:
                self.docks[title].raise_()
        self._finish_menus()
        from popview.gui.compare_runs import CompareRuns
        self.compare_runs = CompareRuns(self)
        self.menus["File"].insertMenu(self.quit_separator, self.compare_runs.menu)
        self.state.focusChanged.connect(self._show_focus)
        self.state.valueModeChanged.connect(self._show_value_mode)
        self.state.openRequested.connect(self.open_paths)
        self.state.currentExperimentChanged.connect(self._show_current)
        # a run of the same name opening later changes the current one's title (runtitle.titled)
        self.state.experimentsChanged.connect(lambda: self._show_current(self.state.current))
        self.state.experimentsChanged.connect(self._fit_timeline_soon)
        if "Timeline" in self.docks:              # moved, tabbed or floated by hand
            self.docks["Timeline"].dockLocationChanged.connect(self._fit_timeline_soon)
            self.docks["Timeline"].topLevelChanged.connect(self._fit_timeline_soon)
        self.statusBar().showMessage("Drop traces, profiles or folders here, or use File > Open")
        self.resize(first_run_size(self.screen()))
        self._restore_layout()

    # ---- panes -----------------------------------------------------------
    def _add_pane(self, spec: PaneSpec) -> bool:
        cls = load_pane_class(spec)
        if cls is None:
            return False
        pane = cls(self.state, None)
        dock = QDockWidget(spec.title, self)
        dock.setObjectName("dock_" + re.sub(r"\W", "_", spec.title.lower()))
        dock.setWidget(pane)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        dock.setAcceptDrops(True)                 # files dropped on a (floating) pane open too
        dock.installEventFilter(self)
        self.panes[spec.title] = pane
        self.docks[spec.title] = dock
        self.panes_menu.addAction(dock.toggleViewAction())
        if hasattr(pane, "menu_actions"):
            actions = pane.menu_actions()
            if isinstance(actions, (list, tuple)):
                actions = {"View": list(actions)}
            for title, acts in actions.items():
                menu = self._menu(title)
                before = self.quit_separator if menu is self.menus["File"] else None
                for act in acts:
                    menu.insertAction(before, act) if before is not None else menu.addAction(act)
        return True

    def _place(self, spec: PaneSpec) -> None:
        dock = self.docks[spec.title]
        target = self.docks.get(spec.place[1]) if spec.place else None
        if target is None:
            self.addDockWidget(spec.area, dock, Qt.Orientation.Vertical)
        elif spec.place[0] == "tab":
            self.tabifyDockWidget(target, dock)
        else:
            orient = Qt.Orientation.Horizontal if spec.place[0] == "right" else Qt.Orientation.Vertical
            self.splitDockWidget(target, dock, orient)

    def _menu(self, title: str):
        if title not in self.menus:
            self.menus[title] = menu = self.menuBar().addMenu(title)
            self.menuBar().insertMenu(self.menus["Help"].menuAction(), menu)
        return self.menus[title]

    # ---- menus and toolbar ---------------------------------------------------
    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.menus = {t: bar.addMenu(t) for t in ("File", "View", "Analysis", "Help")}
        file_menu = self.menus["File"]
        self._action(file_menu, "&Open...", self.open_dialog, QKeySequence.StandardKey.Open)
        self._action(file_menu, "Open &folder...", self.open_folder_dialog, "Ctrl+Shift+O")
        self._action(file_menu, "Open Paraver &view (.cfg)...", self.open_cfg_dialog)
        self._action(file_menu, "Save view as &Paraver cfg...", self.save_view_cfg_dialog)
        self._action(file_menu, "Save &histogram as Paraver cfg...", self.save_histogram_cfg_dialog)
        self._action(file_menu, "Save Paraver vie&w as cfg...", self.save_cfg_view_dialog)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.close_action = self._action(file_menu, "&Close experiment", self.close_experiment,
                                         QKeySequence.StandardKey.Close)
        self.cache_beside_action = CacheBesideAction(self.settings, self)
        file_menu.addAction(self.cache_beside_action)
        self.dask_action = DaskAction(self.settings, self)
        file_menu.addAction(self.dask_action)
        self.quit_separator = file_menu.addSeparator()   # pane File actions go above it
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        view = self.menus["View"]
        self.panes_menu = view.addMenu("&Panes")
        mode_menu = view.addMenu("&Values")
        self.mode_group = QActionGroup(self)
        for mode, label in VALUE_MODES:
            act = QAction(label, self, checkable=True, checked=mode == self.state.value_mode)
            act.setData(mode)
            act.triggered.connect(lambda _c=False, m=mode: self.state.set_value_mode(m))
            self.mode_group.addAction(act)
            mode_menu.addAction(act)
        self._action(view, "&Reset layout", self.reset_layout)
        analysis = self.menus["Analysis"]
        self._action(analysis, "Focus on the &whole run", lambda: self.state.set_focus(Focus.whole()))
        self._action(analysis, "Focus &automatically", lambda: self.state.set_focus(Focus("auto")))
        self._action(self.menus["Help"], "&About popview", self._about)

    def _finish_menus(self) -> None:
        self._default_state = self.saveState()     # the panes' places; their sizes: _default_sizes

    def _default_sizes(self) -> None:
        """Side panes narrow, then the heights of the timeline, the trees and the Advisor:
        the first-run layout of UI.md. Each request is laid out before the next (asked at
        once, Qt honoured only some of them); a later one wins where they conflict."""
        steps = []
        # sizes asked of a 1500 x 950 window: scaled to the window's size (the first-run size, or
        # the size the user gave it: at 1920 x 1080 the Overview's trees had 180 px, its topology 25)
        room = self.size() if self.isVisible() else first_run_size(self.screen())
        wide, high = room.width() / FIRST_RUN_SIZE[0], room.height() / FIRST_RUN_SIZE[1]
        left = [d for t, d in self.docks.items() if self.dockWidgetArea(d) == Area.LeftDockWidgetArea]
        if left:
            steps.append((left[:1], [int(330 * wide)], Qt.Orientation.Horizontal))
        for names, sizes, orientation in ((("Metrics", "Call tree", "System tree"), [370, 470, 430],
                                           Qt.Orientation.Horizontal),
                                          (("Metrics", "Advisor"), [250, 300], Qt.Orientation.Vertical),
                                          (("Timeline", "Advisor"), [275, 260], Qt.Orientation.Vertical)):
            docks = [self.docks[t] for t in names if t in self.docks]
            scale = high if orientation == Qt.Orientation.Vertical else wide
            sizes = [int(size * scale) for size in sizes]
            if docks:
                steps.append((docks, sizes[:len(docks)], orientation))
        self._resize_in_turn(steps)

    def _resize_in_turn(self, steps: list) -> None:
        if steps:
            self.resizeDocks(*steps[0])
            QTimer.singleShot(0, self, lambda: self._resize_in_turn(steps[1:]))   # dropped with the window

    def _action(self, menu, text, slot, shortcut=None) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.triggered.connect(lambda _checked=False: slot())
        menu.addAction(act)
        return act

    def _build_toolbar(self) -> None:
        tb = QToolBar("Analysis", self)
        tb.setObjectName("toolbar_analysis")
        self.addToolBar(tb)
        tb.addWidget(QLabel(" Values: "))
        self.mode_combo = QComboBox()
        for mode, label in VALUE_MODES:
            self.mode_combo.addItem(label, mode)
        self.mode_combo.currentIndexChanged.connect(
            lambda i: self.state.set_value_mode(self.mode_combo.itemData(i)))
        tb.addWidget(self.mode_combo)
        tb.addSeparator()
        self.focus_label = QLabel()
        tb.addWidget(self.focus_label)
        self._show_focus(self.state.focus)
        tb.addSeparator()
        tb.addWidget(QLabel(" Layout: "))
        layouts.install(self, tb, self.menus["View"])
        self.layout_actions[self.layout_name].setChecked(True)

    def _show_focus(self, focus: Focus) -> None:
        self.focus_label.setText(f" Focus: {focus_text(focus)} ")

    def _show_value_mode(self, mode: str) -> None:
        i = self.mode_combo.findData(mode)
        if i >= 0 and i != self.mode_combo.currentIndex():
            self.mode_combo.setCurrentIndex(i)
        for act in self.mode_group.actions():
            act.setChecked(act.data() == mode)

    def _show_current(self, exp) -> None:
        self.setWindowTitle(f"popview - {titled(exp, self.state.experiments)}" if exp is not None else "popview")

    def _fit_timeline_soon(self) -> None:
        QTimer.singleShot(0, self, self.fit_timeline)      # once the panes have followed the runs

    def fit_timeline(self) -> None:
        """Profiles alone have no timeline: its pane, where it has a place of its own (not
        tabbed, not floating), is one line saying so, and the panes beside give its room to the
        trees and the Advisor; the first trace opened gets the layout's sizes back."""
        dock, pane = self.docks.get("Timeline"), self.panes.get("Timeline")
        if dock is None or not hasattr(pane, "set_compact"):
            return
        exps = self.state.experiments
        alone = not dock.isFloating() and not self.tabifiedDockWidgets(dock)
        traces = any(getattr(e, "is_trace", False) for e in exps)
        compact = alone and bool(exps) and not traces
        if compact == pane.compact:
            return
        pane.set_compact(compact)
        if traces and alone:                      # a trace now: the timeline's room back
            if self.layout_name == layouts.OVERVIEW:
                self._default_sizes()
            else:
                layouts.apply(self, self.layout_name)

    def _about(self) -> None:
        from popview._version import __version__
        QMessageBox.about(self, "popview", f"popview {__version__}\nPerformance analysis of parallel programs.")

    # ---- layout persistence -----------------------------------------------
    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        layout = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(layout, QByteArray):
            self.restoreState(layout)
            self.show_layout_name(str(self.settings.value("window/layout", layouts.OVERVIEW)))
        else:
            QTimer.singleShot(0, self._default_sizes)       # once shown, when sizes mean something

    def restoreState(self, state, version: int = 0) -> bool:  # noqa: N802 - Qt override
        """Qt's restore, then no floating pane over the window or off every screen
        (every saved state, from the settings or a session, comes through here)."""
        restored = super().restoreState(state, version)
        docked = docking.repair_floating(self)
        if docked:
            log.info("docked back floating panes that hid the window or were off screen: %s", ", ".join(docked))
        return restored

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/layout", self.layout_name)
        self.settings.sync()

    def apply_layout(self, key: str) -> None:
        """Arrange the panes for a task: layouts.ADVISOR, layouts.TIMELINE or layouts.OVERVIEW."""
        layouts.apply(self, key)

    def show_layout_name(self, key: str) -> None:
        """The layout restored from saved dock places: its name checked in the menu and toolbar."""
        if key in layouts.LAYOUTS:
            self.layout_name = key
            layouts.check(self, key)

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self._default_sizes()
        self.fit_timeline()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        for job in list(self.jobs):
            job.cancel()
        for job in list(self.jobs):
            job.wait()
        self.save_layout()
        super().closeEvent(event)

    # ---- opening -----------------------------------------------------------
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Open traces or profiles", "",
            f"Traces and profiles ({' '.join(readers.file_patterns())} *{SESSION_SUFFIX});;All files (*)")
        self.open_paths(paths)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a trace folder or a folder of runs")
        if path:
            self.open_paths([path])

    def open_paths(self, paths) -> None:
        """Open files and folders: one worker per run, a series per folder of runs
        (or per group of dropped files whose names differ only in numbers)."""
        planned: list[tuple[Path, str | None]] = []
        for path in map(Path, paths):
            if path.suffix == SESSION_SUFFIX:
                self._open_session(path)
                continue
            if path.suffix.lower() == CFG_SUFFIX and not path.is_dir():
                self.open_cfg(path)          # one missing is said as a Paraver view that cannot be read
                continue
            try:
                planned.extend(runs_in(path))
            except InputError as exc:
                self.report_failure(str(exc), str(exc))
                continue
            self._remember_recent(path)
        loose = [p for p, series in planned if series is None]
        shared = series_name(loose) if len(loose) > 1 else None
        for path, series in planned:
            self._start_job(path, series or shared)

    def open_cfg_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open Paraver views", "",
                                                "Paraver configuration files (*.cfg);;All files (*)")
        for path in paths:
            self.open_cfg(Path(path))

    def open_cfg(self, path: Path) -> None:
        """A Paraver view (.cfg) on the current run: a pane of its histograms beside the
        Histograms; kept until a trace is open when none is (or one is still opening). A cfg
        that cannot be read (missing, a folder, not readable; then empty, binary or not a cfg,
        found in the pane's lane) is said as other bad inputs are: a dialog naming the file and
        what is wrong (it said "unexpected CfgError"), and no pane."""
        from popview.analysis.cfg.reader import CfgError, check_readable

        try:
            check_readable(path)
        except CfgError as exc:
            self.report_failure(f"Paraver view not opened: {exc}", str(exc))
            return
        exp = self.state.current
        if exp is None or not exp.is_trace:
            self._waiting_cfgs.append(Path(path))
            waiting = "a trace is opening" if self.jobs else "no trace is open"
            self.statusBar().showMessage(f"{Path(path).name}: opens on the trace once one is open ({waiting})", 8000)
            return
        from popview.gui.cfgviews import CfgViewPane

        before = self.saveState()          # a view that fails gives back the room and the raised tab
        pane = CfgViewPane(self.state, Path(path), exp)
        pane.failed.connect(lambda message, details: self._cfg_failed(pane, before, message, details))
        pane.start()
        if pane.error is not None:         # refused at once (the tests' lanes answer before returning)
            return
        dock = QDockWidget(f"Paraver view: {Path(path).name}", self)
        dock.setObjectName(f"dock_cfg_{len(self.cfg_panes)}_" + re.sub(r"\W", "_", Path(path).stem.lower()))
        dock.setWidget(pane)
        dock.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        anchor = self.docks.get("Histograms")
        if anchor is not None and not anchor.isFloating():
            self.tabifyDockWidget(anchor, dock)
        else:
            self.addDockWidget(Area.BottomDockWidgetArea, dock)
        dock.show()
        dock.raise_()
        if self.dockWidgetArea(dock) == Area.BottomDockWidgetArea and not self.cfg_panes:
            # room for the cfg's timelines, once: a view tabbed beside an open one takes no more
            # (each took 20-40 px more from the timeline; after two its time axis was cut)
            self.resizeDocks([dock], [max(CFG_PANE_MIN_PX, int(self.height() * CFG_PANE_SHARE))],
                             Qt.Orientation.Vertical)
        self.cfg_panes.append(pane)
        dock.destroyed.connect(lambda _o=None, p=pane: self.cfg_panes.remove(p) if p in self.cfg_panes else None)
        log.info("opened the Paraver view %s on %s", path, exp.name)

    def _cfg_failed(self, pane, before, message: str, details: str) -> None:
        """A Paraver view nothing of which could be shown: said, and its dock gone with the room it
        took (the timeline's) and the tab it raised over the Advisor."""
        dock = pane.parentWidget()
        if isinstance(dock, QDockWidget):
            dock.close()
            self.restoreState(before)
        else:
            pane.deleteLater()
        self.report_failure(message, details)

    def save_view_cfg_dialog(self) -> None:
        path = ask_cfg_path(self, "Save view as Paraver cfg", "view.cfg")
        if path is not None:
            self.save_view_cfg(path)

    def save_view_cfg(self, path: Path) -> str | None:
        """The Timeline pane's current view (colour mode, time window, gradient range) as a
        Paraver cfg at `path`, written on a background lane; the status bar says how it went (the
        reason it was not saved is also returned when already known: save_in_background)."""
        from popview.analysis.cfg.export import present_event_types, timeline_cfg
        from popview.gui.widgets.cfgpath import save_in_background

        view = getattr(self.panes.get("Timeline"), "view", None)
        if view is None or view.last_picture is None:
            reason = "no timeline is shown: open a trace"
            self._saved(path, "the timeline view", reason)
            return reason
        exp, mode = view.exp, view.mode
        t0, t1 = view.window()
        t0, t1 = max(t0, 0), min(t1, int(exp.definitions.t_end))
        low, high = (view.palette.low, view.palette.high) if not mode.categorical else (None, None)
        return save_in_background(self, lambda: timeline_cfg(
            exp.definitions, mode, t0, t1, low, high, title=f"popview timeline of {exp.name}: {mode.label}",
            present=present_event_types(exp.reader)), path, lambda r: self._saved(path, "the timeline view", r))

    def save_histogram_cfg_dialog(self) -> None:
        pane = self.panes.get("Histograms")
        if pane is None or pane.table is None:
            self.statusBar().showMessage("No histogram is shown: open a trace and the Histograms pane", 8000)
            return
        path = ask_cfg_path(self, "Save histogram as Paraver cfg", f"{pane.table.kind}.cfg")
        if path is not None:
            self.save_histogram_cfg(path)

    def save_histogram_cfg(self, path: Path) -> str | None:
        """The Histograms pane's table and statistic as a Paraver cfg at `path` (a 2D histogram
        Paraver computes into the same cells); None, or why not (also in the status bar)."""
        pane = self.panes.get("Histograms")
        if pane is None:
            self._saved(path, "the histogram", "no histogram is shown")
            return "no histogram is shown"
        return pane.save_cfg(path, lambda reason: self._saved(path, "the histogram", reason))

    def save_cfg_view_dialog(self) -> None:
        pane = self.current_cfg_pane()
        if pane is None:
            self.statusBar().showMessage("No Paraver view is open: File > Open Paraver view (.cfg)...", 8000)
            return
        path = ask_cfg_path(self, "Save Paraver view as cfg", pane.path.name)
        if path is not None:
            self.save_cfg_view(path, pane)

    def current_cfg_pane(self):
        """The Paraver view pane shown last (its dock visible), else the last one opened."""
        visible = [p for p in self.cfg_panes if p.isVisible()]
        return (visible or self.cfg_panes or [None])[-1]

    def save_cfg_view(self, path: Path, pane=None) -> str | None:
        """A Paraver view pane's cfg (its windows and histograms) written back at `path`."""
        pane = pane or self.current_cfg_pane()
        reason = "no Paraver view is open" if pane is None else pane.save_cfg(path)
        self._saved(path, f"the Paraver view {pane.path.name}" if pane is not None else "", reason)
        return reason

    def _saved(self, path: Path, what: str, reason: str | None) -> None:
        path = Path(path)
        if reason is None:
            self.statusBar().showMessage(f"Saved {what} as {path.name}", 8000)
            log.info("saved %s as the Paraver cfg %s", what, path)
        else:
            self.statusBar().showMessage(f"{path.name} not saved: {reason}", 12000)
            log.warning("%s not saved: %s", path, reason)

    def _open_waiting_cfgs(self) -> None:
        waiting, self._waiting_cfgs = self._waiting_cfgs, []
        for path in waiting:
            self.open_cfg(path)

    def _start_job(self, path: Path, series: str | None) -> None:
        job = OpenJob(path, opener=self._opener(), cache_dir=self.cache_dir, series=series, parent=self)
        widget = JobProgress(job)
        self.statusBar().addPermanentWidget(widget)
        job.opened.connect(lambda exp, j=job: self._on_opened(j, exp))
        job.failed.connect(lambda msg, details: self.report_failure(msg, details))
        job.cancelled.connect(lambda j=job: self._report_cancelled(j))
        job.finished.connect(lambda j=job, w=widget: self._job_finished(j, w))
        self.jobs.append(job)
        log.info("opening %s", path)
        job.start()           # queued on the opening pool, which bounds the conversions at once

    def _opener(self):
        """How a file is opened: popview.open (or the test's opener), converting on the Dask
        cluster of the File menu's setting when there is one; a conversion here builds the
        timeline overview with the cache (from its sorted tables, cheaper than afterwards
        from the cache: popview.cache.overview); a cache found without one (`popview
        convert`'s) opens at once, and the Timeline pane builds it on a lane of its own."""
        from popview.experiment import WITH_CONVERSION

        where = scheduler(self.settings)
        opener = self.opener or functools.partial(popview.open, timeline=WITH_CONVERSION)
        return opener if where is None else functools.partial(opener, dask=where)

    def _on_opened(self, job: OpenJob, exp) -> None:
        self.state.add_experiment(exp, series=job.series)
        log.info("opened %s (%s, %s)", exp.source, exp.format, exp.label)
        self.statusBar().showMessage(f"Opened {exp.name}", 5000)
        if self._waiting_cfgs and self.state.current is not None and self.state.current.is_trace:
            self._open_waiting_cfgs()

    def report_failure(self, message: str, details: str) -> None:
        """A dialog naming what failed, with the details in it and in the log pane."""
        self.errors.append(message)
        log.error("%s\n%s", message, details)
        box = QMessageBox(QMessageBox.Icon.Warning, "Cannot open", message, QMessageBox.StandardButton.Ok, self)
        if details and details != message:
            box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _report_cancelled(self, job: OpenJob) -> None:
        log.warning("cancelled opening %s", job.path)
        self.statusBar().showMessage(f"Cancelled opening {job.path.name}", 5000)

    def _job_finished(self, job: OpenJob, widget: QWidget) -> None:
        self.statusBar().removeWidget(widget)
        widget.deleteLater()
        if job in self.jobs:
            self.jobs.remove(job)
        job.deleteLater()

    def _open_session(self, path: Path) -> None:
        binding = importlib.import_module("popview.gui.session_binding")
        binding.open_session(self.state, path)
        self._remember_recent(path)

    def close_experiment(self) -> None:
        if self.state.current is not None:
            self.state.remove_experiment(self.state.current)

    # ---- recent files --------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in value or []]

    def _remember_recent(self, path: Path) -> None:
        p = str(Path(path).resolve())
        recent = [p] + [r for r in self.recent_files() if r != p]
        self.settings.setValue("recent", recent[:MAX_RECENT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _c=False, p=p: self.open_paths([p]))
        if not recent:
            self.recent_menu.addAction("(none)").setEnabled(False)

    # ---- drag and drop -------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.dragEnterEvent(event)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if isinstance(obj, QDockWidget):
            handler = {QEvent.Type.DragEnter: self.dragEnterEvent, QEvent.Type.DragMove: self.dragMoveEvent,
                       QEvent.Type.Drop: self.dropEvent}.get(event.type())
            if handler is not None:
                handler(event)
                return True
        return super().eventFilter(obj, event)

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_paths(paths)


FIRST_RUN_SIZE = (1500, 950)
# Below this height of free screen, panes stacked under another share its place as tabs.
COMPACT_BELOW = 900
STACKED_IN_COMPACT = ("Topology",)


def free_room(screen) -> QSize | None:
    """The screen's room for windows (without panels), None when unknown."""
    return screen.availableGeometry().size() if screen is not None else None


def compact_layout(specs: list[PaneSpec], screen) -> list[PaneSpec]:
    """On a short screen (a 1280 x 800 laptop) the Topology is a tab beside the System tree,
    not under it: stacked, the middle row needs more height than the screen leaves it."""
    room = free_room(screen)
    if room is None or room.height() >= COMPACT_BELOW:
        return list(specs)
    return [replace(s, place=("tab", s.place[1])) if s.title in STACKED_IN_COMPACT and s.place else s
            for s in specs]


def first_run_size(screen) -> QSize:
    """1500 x 950, or less on a smaller screen: the window (and its title bar) fits a 1280 x 800 laptop."""
    width, height = FIRST_RUN_SIZE
    room = free_room(screen)
    if room is not None:
        width, height = min(width, int(room.width() * 0.96)), min(height, int(room.height() * 0.92))
    return QSize(width, height)


def _slack_taker() -> QWidget:
    """The central widget: empty and of no height. Without one, Qt's dock layout moved the
    separator between the side column and the other panes a little on every relayout, for
    a second after the window showed, until those panes were at their minimum widths (330
    px asked for the side column, 720 px given); a central widget takes up the slack."""
    center = QWidget()
    center.setMaximumHeight(0)
    center.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return center
