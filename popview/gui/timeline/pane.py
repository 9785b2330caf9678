"""The Timeline pane: a toolbar, one TimelineView per open experiment
(stacked, each scaled to its own run or focus window), a legend for the
colour mode and the what/where of the point under the mouse."""
from __future__ import annotations

import html

import numpy as np

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFileDialog, QFrame, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QScrollArea,
    QSplitter, QStackedWidget, QToolButton, QVBoxLayout, QWidget,
)

from popview.analysis.focus import Focus
from popview.analysis import timeline_data
from popview.analysis.timeline_data import ColourMode, focus_span, parse_time_window
from popview.failures import one_line
from popview.gui.jobs import Lane
from popview.gui.timeline.highlight import channel as highlight_channel
from popview.gui.timeline.rows import GROUPINGS
from popview.gui.timeline.view import AUTO, AUTO_LINES, AUTO_PX_PER_LINE, OFF, ON, TimelineView, format_time
from popview.gui.widgets.elided import ElidedLabel
from popview.gui.widgets.runtitle import run_title, run_titles
from popview.gui.widgets.units import format_span
from popview.gui.widgets.builds import CANCELLED, PaneBuilds

NO_TIMELINE = "A profile has no timeline: open a trace to see one."
VIEW_MIN_HEIGHT = 70      # px per stacked run: a few rows and the time axis stay readable
READABLE_ROWS = 8         # a stacked run shows at least this many rows (or all it has), each labelled
ROW_PX = 15               # the row axis labels rows at least 14 px apart
AXIS_PX = 40              # time axis and margins of a view
TITLE_PX = 20             # a stacked run's title line
COMMS_AUTO_TEXT = "Comms (auto)"
COMMS_TIP = ("Communication lines: by default on when zoomed in far enough to tell them apart "
             f"(at most one message per {AUTO_PX_PER_LINE} pixels of width, {AUTO_LINES:,} in all), off "
             "when zoomed out. Tick or untick to choose; right-click > automatic to follow the zoom again")
SIDE_PX = 200             # the legend column, widened up to LEGEND_MAX_PX for long names
LEGEND_MAX_PX = 300       # wider names wrap: the runs keep the width
STACK_MIN_PX = 100        # the runs and side column's least height in a low dock
QWIDGETSIZE_MAX = (1 << 24) - 1   # Qt's "no maximum size" (not exported by PySide6)
STACKED_SHARE = 0.3       # a few stacked runs keep room to show whole within this share of the window's height


def _critical_path(exp, focus) -> dict:
    """In the pool: the replay's critical path, or {"error": why not}."""
    try:
        from popview.analysis.replay import replay
        return replay(exp, focus).critical_path
    except Exception as exc:  # noqa: BLE001 - reported to the user as text
        return {"error": one_line(exc)}


def swatch(colour: QColor, size: int = 14) -> QPixmap:
    """A legend's colour sample, outlined in grey: white ("Not created") shows on white."""
    pix = QPixmap(size, size)
    pix.fill(colour)
    painter = QPainter(pix)
    painter.setPen(QColor(128, 128, 128))
    painter.drawRect(0, 0, size - 1, size - 1)
    painter.end()
    return pix


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def critical_path_summary(path: dict, run: str = "") -> str:
    """One line: whose path it is, where it runs and how much of it is work, how much waiting."""
    whose = f"critical path of {run}" if run else "critical path"
    if len(path["loc"]) == 0:
        return f"{whose}: empty"
    span = (path["end"] - path["begin"]) * 1e-9
    waiting = np.asarray(path.get("waiting", np.zeros(len(span), bool)), bool)
    return (f"{whose}: {format_span(path['begin'][0], path['end'][-1])}: "
            f"{format_time(span[~waiting].sum() * 1e9)} on {_count(int((~waiting).sum()), 'piece', 'pieces')} of work, "
            f"{format_time(span[waiting].sum() * 1e9)} waiting for "
            f"{_count(int(waiting.sum()), 'dependency', 'dependencies')} (thin)")


CANCELLED_TEXT = ("No timeline: building its overview was cancelled, nothing was kept. "
                  '<a href="again">Build it again</a>')




class TimelinePane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.views: dict[int, TimelineView] = {}
        self._path_lanes: dict[int, Lane] = {}        # one per view: each view's newest request wins
        self._unprepared: dict[int, str] = {}         # runs whose overview could not be built: why
        self._settle_timer = QTimer(self, singleShot=True, interval=120, timeout=self._settled)
        self.compact = False               # one line saying why there is no timeline (set_compact)
        self._build()
        state.experimentsChanged.connect(self._sync_experiments)
        state.currentExperimentChanged.connect(self._current_changed)
        state.focusChanged.connect(self._focus_changed)
        state.locationSelected.connect(self._location_selected)
        state.annotationsChanged.connect(self._annotations_changed)
        highlight_channel(state).intervals.connect(self._highlight)
        self._sync_experiments()

    # ---- layout ------------------------------------------------------------------
    def _build(self) -> None:
        self.mode_box = QComboBox(toolTip="Colour: what the timeline shows")
        self.mode_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.mode_box.currentIndexChanged.connect(self._mode_chosen)
        self.group_box = QComboBox(toolTip="Rows: one per thread, per process or per node")
        self.group_box.addItems([g.capitalize() for g in GROUPINGS])
        self.group_box.currentIndexChanged.connect(self._grouping_chosen)
        self.back_button = self._tool("◀", "Back in the zoom history (Alt+Left)", lambda: self._each(TimelineView.back))
        self.forward_button = self._tool("▶", "Forward in the zoom history (Alt+Right)",
                                         lambda: self._each(TimelineView.forward))
        self.fit_button = self._tool("Fit", "Show the whole run (Home)", lambda: self._each(TimelineView.fit))
        self.goto_edit = QLineEdit(placeholderText="go to: 1.2 s or 10ms-12ms")
        self.goto_edit.setMaximumWidth(200)
        self.goto_edit.returnPressed.connect(self._go_to)
        self.comms = AUTO                  # communication lines: by zoom until the user ticks the box
        self.lines_box = QCheckBox(COMMS_AUTO_TEXT, checked=False, toolTip=COMMS_TIP)
        self.lines_box.clicked.connect(lambda on: self.set_comms(ON if on else OFF))
        self.lines_box.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        automatic = QAction("Communication lines by zoom (automatic)", self.lines_box)
        automatic.triggered.connect(lambda: self.set_comms(AUTO))
        self.lines_box.addAction(automatic)
        self.flags_box = QCheckBox("Flags", toolTip="Event flags")
        self.flags_box.toggled.connect(lambda on: self._set_overlay("show_flags", on))
        self.path_box = QCheckBox("Critical path", toolTip="Critical path from the replay of the run")
        self.path_box.toggled.connect(self._critical_path_toggled)
        self.one_run_box = QCheckBox("One run", toolTip="Show only the current run, not the series stacked")
        self.one_run_box.toggled.connect(lambda _on: self._show_runs())
        self.save_button = self._tool("Save…", "Save the timeline as PNG or SVG", self._save_dialog)
        self.fit_scale_button = self._tool("Fit scale", "Scale the gradient to the values shown", self.fit_scale)
        self.bar = bar = QHBoxLayout()
        bar.setContentsMargins(2, 2, 2, 2)
        for w in (self.mode_box, self.group_box, self.back_button,
                  self.forward_button, self.fit_button, self.goto_edit, self.fit_scale_button, self.save_button):
            bar.addWidget(w)
        for box in (self.mode_box, self.group_box):    # may shrink: the pane fits a 1280 px window
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(7)
        self.goto_edit.setMinimumWidth(80)
        bar.addStretch(1)
        # what is shown, above the legend: the toolbar is full, and a status at its end was cut off
        # at the window's edge; shortened if need be (notes can make it long), whole in its tooltip
        self.source_label = ElidedLabel()
        self.source_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.source_label.setStyleSheet("color: gray")

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.legend = QListWidget()
        self.legend.setIconSize(QSize(14, 14))
        self.legend.setWordWrap(True)          # a name wider than LEGEND_MAX_PX wraps, never cut
        self.legend.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.legend.setMinimumHeight(24)      # scrolls: a low dock keeps its room for the runs
        self.gradient_label = QLabel()
        self.side = side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.source_label)
        overlays = QGridLayout()           # beside the view, not in the toolbar: the pane stays narrow
        for i, box in enumerate((self.lines_box, self.flags_box, self.path_box, self.one_run_box)):
            # never squeezed below their text's height: a low dock cut the boxes and their names
            box.setMinimumHeight(box.sizeHint().height())
            overlays.addWidget(box, i // 2, i % 2)
        self.source_label.setMinimumHeight(self.source_label.fontMetrics().height())
        side_layout.addLayout(overlays)
        side_layout.addWidget(self.legend)
        side_layout.addWidget(self.gradient_label)
        side.setFixedWidth(SIDE_PX)        # the runs keep the width
        # many stacked runs scroll instead of forcing the window taller than the screen
        self.scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.splitter)
        # the name of the run scrolled under the top edge, whose own title is out of sight: the
        # series opened scrolled to its largest run, and the run above showed rows without a name
        self.run_header = QLabel(self.scroll.viewport(), textFormat=Qt.TextFormat.RichText)
        self.run_header.setAutoFillBackground(True)
        self.run_header.setStyleSheet("QLabel { background: palette(window); color: palette(window-text); "
                                      "border: 1px solid palette(mid); padding: 0px 4px; }")
        self.run_header.setToolTip("The run whose timeline is scrolled under this edge")
        self.run_header.hide()
        self.scroll.verticalScrollBar().valueChanged.connect(lambda _v: self._place_run_header())
        self.splitter.splitterMoved.connect(lambda *_: self._place_run_header())
        self.splitter.installEventFilter(self)
        self.scroll.viewport().installEventFilter(self)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)   # the default 9 px above and below were the runs' 18 px
        body.addWidget(self.scroll, 1)
        body.addWidget(side)
        self.message = QLabel(NO_TIMELINE, alignment=Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.linkActivated.connect(self._build_again)     # "build it again" after a cancel
        self.building = QVBoxLayout()       # the overviews being built: progress and Cancel (JobProgress)
        self._preparing = PaneBuilds(self, self.building, "timeline overview", self._overview_built,
                                     lambda exp, fraction: self._preparing_shown(exp.name, fraction))
        self.stack = QStackedWidget()
        self.timeline_page = timeline = QWidget()
        timeline.setLayout(body)
        self._fit_min_height()
        self.stack.addWidget(timeline)
        self.stack.addWidget(self.message)
        self.info = QLabel(textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setWordWrap(True)
        self.info.setMinimumHeight(34)
        self.info.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)
        layout.addLayout(self.building)
        layout.addWidget(self.info)

    def _fit_min_height(self) -> None:
        """A low dock: the legend scrolls, the window stays on screen; yet the side column's
        status, check boxes and a line of legend (or the gradient's key) keep their height
        (a fixed 100 px squeezed the boxes to 6 px in a low dock). And a few stacked runs
        keep room to show whole, each at its least readable height, while that is at most
        STACKED_SHARE of the window's height: in the Overview's first-run sizes the heat
        Score-P and Extrae 2x2 runs lacked some 30 px and the lower one's time axis was cut
        until the user scrolled; a longer series scrolls."""
        if self.compact:                     # one line saying why there is no timeline
            return
        self.timeline_page.layout().activate()
        least = max(STACK_MIN_PX, self.timeline_page.minimumSizeHint().height())
        window = self.window()
        if len(self.views) > 1 and window is not self and not self.one_run_box.isChecked():
            runs = self.splitter.minimumSizeHint().height()
            if runs <= STACKED_SHARE * window.height():
                least = max(least, runs)
        if least != self.stack.minimumHeight():
            self.stack.setMinimumHeight(least)

    def room_wanted(self) -> int:
        """The height (px) the stacked runs lack to show whole: 0 with one run, or when they fit."""
        if len(self.views) < 2 or self.one_run_box.isChecked() or self.stack.currentIndex() != 0:
            return 0
        return max(0, self.splitter.minimumSizeHint().height() - self.scroll.viewport().height())

    def _tool(self, text, tip, slot) -> QToolButton:
        b = QToolButton(text=text, toolTip=tip)
        b.clicked.connect(slot)
        return b

    def menu_actions(self):
        fit = QAction("Timeline: fit all (Home in the timeline)", self)
        fit.triggered.connect(lambda: self._each(TimelineView.fit))
        return {"View": [fit]}

    # ---- experiments ----------------------------------------------------------------
    @property
    def view(self) -> TimelineView | None:
        """The view of the current experiment (or the first one)."""
        cur = self.state.current
        if cur is not None and id(cur) in self.views:
            return self.views[id(cur)]
        return next(iter(self.views.values()), None)

    def _sync_experiments(self) -> None:
        traces = [e for e in self.state.by_size() if e.is_trace]
        for key in [k for k in self.views if k not in {id(e) for e in traces}]:
            view = self.views.pop(key)
            view.shutdown()
            view.hide()
            view.deleteLater()
        self._preparing.cancel_all_but({id(e) for e in traces})     # a run closed: its build stops
        for key in [k for k in self._unprepared if k not in {id(e) for e in traces}]:
            del self._unprepared[key]
        for exp in traces:
            if id(exp) not in self.views and self._overview_ready(exp):
                view = TimelineView(exp)
                view.hovered.connect(self._show_info)
                view.windowSelected.connect(self._window_selected)
                view.locationClicked.connect(self._location_clicked)
                view.drawn.connect(self._drawn)
                view.comms = self.comms
                view.show_flags = self.flags_box.isChecked()
                view.setMinimumHeight(readable_height(view))
                self.views[id(exp)] = view
                self.splitter.addWidget(view)
                self._apply_focus(view, self.state.focus)
                view.set_annotations(self._annotation_ranges(exp))
        for index, exp in enumerate(e for e in traces if id(e) in self.views):   # stacked in the experiments' order
            self.splitter.insertWidget(index, self.views[id(exp)])
        self._current_changed(self.state.current)

    def _overview_ready(self, exp) -> bool:
        """Whether the run's timeline overview (popview.cache.overview) is open. If not, it is
        built on a lane of its own, never in the GUI thread (seconds on a large trace), with
        its progress and Cancel in the pane, and the run's view made once it is there. The
        window's openings build it only with a conversion of their own (popview.experiment
        WITH_CONVERSION): a run converted by `popview convert` appears at once (its trees and
        the Advisor read the cache) and its overview is built here. The lane also compiles the
        pictures' kernels once (timeline_data.warm_kernels): the pictures are drawn in the GUI
        thread, which a first run's compiles froze 0.4-1 s each."""
        prepared = getattr(exp, "timeline_prepared", True) and timeline_data.kernels_warm()
        if prepared or id(exp) in self._unprepared:
            return prepared
        self._preparing.start(exp, lambda progress, cancel: _prepare(exp, progress, cancel))
        return False

    def _build_again(self, _link: str = "") -> None:
        """The message's link after a cancel: build the cancelled overviews again."""
        for key in [k for k, why in self._unprepared.items() if why == CANCELLED]:
            del self._unprepared[key]
        self._sync_experiments()

    def _preparing_shown(self, name: str, fraction: float) -> None:
        if not self.views:
            self._show_message(f"Building the timeline overview of {name}: {100 * fraction:.0f} %")

    def _overview_built(self, exp, result, error: str | None) -> None:
        if result == CANCELLED:
            self._unprepared[id(exp)] = CANCELLED
        elif error is not None:
            self._unprepared[id(exp)] = error.splitlines()[0]
        self.message.setText(NO_TIMELINE)         # the progress text goes (the page is hidden behind the runs)
        self._sync_experiments()

    # ---- session view state ----------------------------------------------------------
    def view_state(self) -> dict:
        """The visible window, colour mode and overlays, for sessions and bookmarks."""
        view = self.view
        if view is None:
            return {}
        mode = view.mode
        return {"window": list(view.window()),
                "mode": {"kind": mode.kind, "param": mode.param, "categories": mode.categories},
                "comms": self.comms, "one_run": self.one_run_box.isChecked()}

    def restore_view_state(self, state: dict) -> None:
        """Apply a saved window and colour mode now, or once the timeline exists."""
        self._pending_view_state = dict(state or {})
        self._apply_view_state()

    def _apply_view_state(self) -> None:
        state = getattr(self, "_pending_view_state", None)
        view = self.view
        if not state or view is None:
            return
        self._pending_view_state = None
        if isinstance(state.get("one_run"), bool):
            self.one_run_box.setChecked(state["one_run"])
        comms = state.get("comms")
        if comms in (AUTO, ON, OFF) or isinstance(comms, bool):
            # sessions written before automatic lines saved a box ticked or not (unticked: the default)
            self.set_comms(comms if isinstance(comms, str) else ON if comms else AUTO)
        mode = state.get("mode")
        if isinstance(mode, dict):
            self.set_mode(ColourMode(str(mode.get("kind", "state")), int(mode.get("param", 0)),
                                     bool(mode.get("categories", False))))
        window = state.get("window")
        if isinstance(window, list) and len(window) == 2:
            view.set_window(float(window[0]), float(window[1]))

    def _current_changed(self, exp) -> None:
        if exp is not None and not exp.is_trace and not self.views:
            self._show_message(NO_TIMELINE)
            return
        if not self.views:
            if self._preparing:
                self._show_message("Building the timeline overview…")
            elif CANCELLED in self._unprepared.values():
                self._show_message(CANCELLED_TEXT)
            elif self._unprepared:
                self._show_message(f"No timeline: its overview could not be built "
                                   f"({next(iter(self._unprepared.values()))})")
            else:
                self._show_message("Open a trace to see its timeline." if exp is None else NO_TIMELINE)
            return
        self.stack.setCurrentIndex(0)
        self._enable_tools(True)
        self._show_runs()
        self._fill_modes()
        self._apply_view_state()
        if self.path_box.isChecked() and self.view is not None:
            self._show_path_note(self.view)

    def set_compact(self, on: bool) -> None:
        """Only profiles open, in a pane of its own (not tabbed): no timeline to show, so one
        line says why, without the tools that would act on nothing, and the pane asks no more
        height than that line; the window gives the rest to the panes that have content (the
        Overview left 280 px of nothing above the trees of a Cube profile)."""
        on = bool(on)
        if on == self.compact:
            return
        self.compact = on
        for i in range(self.bar.count()):
            widget = self.bar.itemAt(i).widget()
            if widget is not None:
                widget.setVisible(not on)
        self.info.setVisible(not on)
        self.message.setWordWrap(not on)
        if on:
            line = self.message.fontMetrics().height() + 2 * self.message.margin() + 8
            self.stack.setMaximumHeight(line)
            self.stack.setMinimumHeight(0)
            self.setMaximumHeight(line + self.layout().spacing() * 2)
        else:
            self.stack.setMaximumHeight(QWIDGETSIZE_MAX)
            self.setMaximumHeight(QWIDGETSIZE_MAX)
            self._fit_min_height()

    def _show_message(self, text: str) -> None:
        """No timeline: the reason in its place, and no tool that would act on nothing."""
        self.message.setText(text)
        self.stack.setCurrentIndex(1)
        self._enable_tools(False)

    def _enable_tools(self, on: bool) -> None:
        for w in (self.mode_box, self.group_box, self.fit_button, self.goto_edit, self.fit_scale_button,
                  self.save_button, self.lines_box, self.flags_box, self.path_box, self.one_run_box):
            w.setEnabled(on)
        if not on:
            self.mode_box.clear()
            self.back_button.setEnabled(False)
            self.forward_button.setEnabled(False)

    def _show_runs(self) -> None:
        """Only the current run, or the series stacked with the current run scrolled into view;
        stacked, each is titled with its run (the current one in bold): their rows are all named
        THREAD 1.1.1 ... and told nothing of which run they were."""
        current = self.view
        stacked = len(self.views) > 1 and not self.one_run_box.isChecked()
        titles = run_titles([view.exp for view in self.views.values()])
        for view in self.views.values():
            view.setVisible(view is current or not self.one_run_box.isChecked())
            title = (titles[id(view.exp)], view is current) if stacked else None
            if title != getattr(view, "run_title", None):
                view.run_title = title
                text = None if title is None else html.escape(title[0])
                view.setTitle(f"<b>{text}</b>" if title and title[1] else text,
                              size=f"{view.font().pointSizeF():g}pt", justify="left")
                view.setMinimumHeight(readable_height(view) + (TITLE_PX if title else 0))
        self._fit_min_height()
        if current is not None:
            QTimer.singleShot(0, self, lambda: self._scroll_to(current))
        QTimer.singleShot(0, self, self._place_run_header)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) and \
                obj in (self.splitter, self.scroll.viewport()):
            QTimer.singleShot(0, self, self._place_run_header)
        return super().eventFilter(obj, event)

    def _place_run_header(self) -> None:
        """Over the run that crosses the top edge with its title out of sight: its title, pinned
        to the edge, pushed up by the next run's own title as it comes (a list's sticky header)."""
        port = self.scroll.viewport()
        header = self.run_header
        crossing = None
        stacked = len(self.views) > 1 and not self.one_run_box.isChecked()
        # any run crossing the edge, however little of it shows: one scrolled down to its time
        # axis alone (under 35 px, no row) was a scale without a name (audit G7)
        for view in self.views.values() if stacked else ():
            top = view.mapTo(port, view.rect().topLeft()).y()
            if view.isVisible() and top < 0 < top + view.height():
                crossing = view
        if crossing is None or getattr(crossing, "run_title", None) is None:
            header.hide()
            header.setProperty("run", None)
            return
        name, current = crossing.run_title
        header.setText(f"<b>{html.escape(name)}</b>" if current else html.escape(name))
        header.setFont(crossing.font())
        header.adjustSize()
        bottom = crossing.mapTo(port, crossing.rect().bottomLeft()).y()
        left = crossing.mapTo(port, QPoint(int(crossing.plotItem.vb.sceneBoundingRect().left()), 0)).x()
        header.move(left, min(0, bottom - header.height()))
        header.setProperty("run", id(crossing))
        header.show()
        header.raise_()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        """A new height (another layout) keeps the current run in view."""
        super().resizeEvent(event)
        current = self.view
        if current is not None:
            QTimer.singleShot(0, self, lambda: self._scroll_to(current))

    def _scroll_to(self, view) -> None:
        if view in self.views.values():
            top = view.mapTo(self.splitter, view.rect().topLeft()).y()
            bar = self.scroll.verticalScrollBar()
            if not bar.value() <= top <= bar.value() + self.scroll.viewport().height() - min(
                    view.height(), self.scroll.viewport().height()):
                bar.setValue(top)

    def _fill_modes(self) -> None:
        view = self.view
        if view is None:
            return
        current = view.mode
        self.mode_box.blockSignals(True)
        self.mode_box.clear()
        self._modes = view.data.modes()
        for m in self._modes:
            self.mode_box.addItem(m.label)
        keys = [(m.kind, m.param) for m in self._modes]
        self.mode_box.setCurrentIndex(keys.index((current.kind, current.param))
                                      if (current.kind, current.param) in keys else 0)
        self.mode_box.blockSignals(False)
        self._drawn()

    def _each(self, method) -> None:
        view = self.view
        if view is not None:
            method(view)

    # ---- toolbar --------------------------------------------------------------------------
    def set_mode(self, mode: ColourMode) -> None:
        """Colour every experiment's timeline by `mode` (kind and param) where it has that data."""
        for view in self.views.values():
            match = [m for m in view.data.modes() if (m.kind, m.param) == (mode.kind, mode.param)]
            view.set_mode(match[0] if match else ColourMode("state", label="State"))
        keys = [(m.kind, m.param) for m in getattr(self, "_modes", [])]
        if (mode.kind, mode.param) in keys:
            self.mode_box.blockSignals(True)
            self.mode_box.setCurrentIndex(keys.index((mode.kind, mode.param)))
            self.mode_box.blockSignals(False)

    def _mode_chosen(self, index: int) -> None:
        if 0 <= index < len(getattr(self, "_modes", [])):
            self.set_mode(self._modes[index])

    def _grouping_chosen(self, index: int) -> None:
        for view in self.views.values():
            view.set_grouping(GROUPINGS[index])
            view.setMinimumHeight(readable_height(view))

    def set_comms(self, mode: str) -> None:
        """Communication lines AUTO (on when the window holds few messages), ON or OFF."""
        self.comms = mode
        self.lines_box.setText(COMMS_AUTO_TEXT if mode == AUTO else "Comms")
        for view in self.views.values():
            view.comms = mode
            view.redraw_now()
        self._show_comms()

    def _show_comms(self) -> None:
        """The box ticked when lines are on, by the user or by the zoom."""
        view = self.view
        on = self.comms == ON or (self.comms == AUTO and view is not None and view.lines_shown)
        self.lines_box.blockSignals(True)
        self.lines_box.setChecked(on)
        self.lines_box.blockSignals(False)

    def _set_overlay(self, attr: str, on: bool) -> None:
        for view in self.views.values():
            setattr(view, attr, on)
            view.redraw_now()

    def _go_to(self) -> None:
        view = self.view
        if view is None:
            return
        try:
            t0, t1 = parse_time_window(self.goto_edit.text())
        except ValueError as exc:
            self.info.setText(html.escape(str(exc)))
            return
        view.go_to(t0, t1)

    def fit_scale(self) -> None:
        view = self.view
        if view is not None and not view.mode.categorical and view.last_picture is not None:
            view.palette.fit(view.last_picture.values)
            view.redraw_now()
            self._settled()

    def save_image(self, path: str) -> None:
        """The current experiment's timeline as PNG (or SVG when the name ends in .svg)."""
        view = self.view
        if view is None:
            return
        if str(path).lower().endswith(".svg"):
            generator = QSvgGenerator()
            generator.setFileName(str(path))
            generator.setSize(view.size())
            generator.setViewBox(view.rect())
            painter = QPainter(generator)
            view.render(painter)
            painter.end()
        else:
            view.grab().save(str(path))

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save timeline", "timeline.png", "PNG (*.png);;SVG (*.svg)")
        if path:
            self.save_image(path)

    def _critical_path_toggled(self, on: bool) -> None:
        if not on and self.info.text().startswith(("critical path", "computing the critical path")):
            self.info.setText("")
        for view in self.views.values():
            view.critical_path_error = None
            if not on:
                view.set_critical_path(None)
                continue
            focus = self.state.focus
            if focus.kind == "auto":
                from popview.analysis.autofocus import propose
                focus = propose(view.exp)[0]
            self.info.setText("computing the critical path…")
            self._path_lane(view).submit(lambda exp=view.exp, focus=focus: _critical_path(exp, focus),
                                         lambda path, error, view=view: self._path_ready(view, path or
                                                                                         {"error": error}))

    def _path_lane(self, view) -> Lane:
        if id(view) not in self._path_lanes:
            self._path_lanes[id(view)] = Lane(self, "critical path")
        return self._path_lanes[id(view)]

    def _path_ready(self, view, path) -> None:
        if view not in self.views.values() or not self.path_box.isChecked():
            return
        view.critical_path_error = path["error"] if path and "error" in path else None
        if view.critical_path_error is None:
            view.set_critical_path(path)
        if view is self.view:               # the note is the current run's, whichever run's path came last
            self._show_path_note(view)

    def _show_path_note(self, view) -> None:
        """The info line says the critical path of the current run (each stacked run draws its own)."""
        titled = getattr(view, "run_title", None)
        run = titled[0] if titled else run_title(view.exp)
        error = getattr(view, "critical_path_error", None)
        if error is not None:
            self.info.setText(f"critical path of {html.escape(run)} not available: {html.escape(error)}")
        elif view.critical_path is not None:
            self.info.setText(html.escape(critical_path_summary(view.critical_path, run)))
        else:
            self.info.setText("computing the critical path…")

    # ---- AppState ----------------------------------------------------------------------------
    def _window_selected(self, t0: int, t1: int) -> None:
        view = self.sender()
        if isinstance(view, TimelineView) and view.exp is not self.state.current:
            self.state.set_current(view.exp)
        self.state.set_focus(Focus.window(t0, t1))

    def _location_clicked(self, loc: int) -> None:
        view = self.sender()
        if isinstance(view, TimelineView) and view.exp is not self.state.current:
            self.state.set_current(view.exp)
        self.state.select_location(loc)

    def _focus_changed(self, focus) -> None:
        for view in self.views.values():
            self._apply_focus(view, focus)

    @staticmethod
    def _apply_focus(view: TimelineView, focus) -> None:
        """Shade the focus; a call-path or iterations focus also scales each run
        (stacked runs of a series included) to its own span of that focus."""
        span = focus_span(view.exp, focus)
        view.set_focus_window(*(span or (None, None)))
        if span is not None and focus.kind in ("callpath", "iterations"):
            view.set_window(*span)

    def _location_selected(self, loc: int) -> None:
        view = self.view
        if view is not None:
            view.highlight_location(loc)

    def _highlight(self, exp, intervals) -> None:
        view = self.views.get(id(exp))
        if view is not None:
            view.highlight_intervals(*intervals)

    def _annotation_ranges(self, exp) -> list[tuple[int, int, str]]:
        session = self.state.session
        if session is None or not hasattr(session, "annotations_for"):
            return []
        try:
            anns = session.annotations_for(exp.source, "time_range")
        except (KeyError, StopIteration, AttributeError):
            return []
        return [(a.t0, a.t1, a.text) for a in anns if a.t0 is not None and a.t1 is not None]

    def _annotations_changed(self) -> None:
        for view in self.views.values():
            view.set_annotations(self._annotation_ranges(view.exp))

    # ---- feedback ------------------------------------------------------------------------------
    def _drawn(self) -> None:
        """After a redraw: the light feedback now, the legend and the window signal once it settles."""
        view = self.view
        if view is None or view.last_picture is None:
            return
        t0, t1 = view.window()
        pic = view.last_picture
        notes = ([pic.message] if pic.message else []) + view.overlay_notes
        self.source_label.setText(" · ".join([f"{format_time(t1 - t0)} shown", f"from {pic.source}", *notes]))
        self._show_comms()
        self.back_button.setEnabled(view.can_go_back())
        self.forward_button.setEnabled(view.can_go_forward())
        self._settle_timer.start()

    def _settled(self) -> None:
        view = self.view
        if view is None or view.last_picture is None:
            return
        self._fill_legend(view)
        self.state.timeWindowChanged.emit(*view.window())

    def _fill_legend(self, view: TimelineView) -> None:
        self.legend.clear()
        self.legend.setVisible(view.mode.categorical)
        if view.mode.categorical:
            self.gradient_label.hide()
            for colour, label, fraction in view.palette.legend(view.last_index):
                self.legend.addItem(QListWidgetItem(QIcon(swatch(QColor(*colour))), f"{label}  {fraction:.0%}"))
            self._fit_side()
            self._fit_min_height()
            return
        p = view.palette
        unit = {"useful": "duration", "ipc": "IPC"}.get(view.mode.kind, "per second")
        low = format_time(p.low) if view.mode.kind == "useful" else f"{p.low:.3g}"
        high = format_time(p.high) if view.mode.kind == "useful" else f"{p.high:.3g}"
        lo_c, hi_c = p.lut[1], p.lut[255]
        self.gradient_label.setText(
            f"<b>{html.escape(view.mode.label)}</b> ({unit})<br>"
            f"<span style='background: rgb({lo_c[0]},{lo_c[1]},{lo_c[2]})'>&nbsp;&nbsp;&nbsp;</span> {low}<br>"
            f"<span style='background: rgb({hi_c[0]},{hi_c[1]},{hi_c[2]})'>&nbsp;&nbsp;&nbsp;</span> ≥ {high}<br>"
            "<span style='background: black'>&nbsp;&nbsp;&nbsp;</span> no value")
        self.gradient_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.gradient_label.show()
        self._fit_side()
        self._fit_min_height()

    def _fit_side(self) -> None:
        """The legend column as wide as its longest entry (SIDE_PX to LEGEND_MAX_PX)."""
        texts = [self.legend.item(i).text() for i in range(self.legend.count())]
        widest = max((self.legend.fontMetrics().horizontalAdvance(t) for t in texts), default=0)
        need = widest + legend_chrome(self.legend)
        self.side.setFixedWidth(min(max(SIDE_PX, need), LEGEND_MAX_PX))

    def _show_info(self, info: dict | None) -> None:
        """The point under the mouse; stacked, with the run it is in (every run has a THREAD 1.1.1)."""
        view = self.sender()
        run = getattr(view, "run_title", None) if info else None
        self.info.setText((f"<b>{html.escape(run[0])}</b>: " if run else "") + info_html(info) if info else "")


def legend_chrome(legend) -> int:
    """A legend entry's width beyond its text: icon, spacings, frame and a scroll bar."""
    icon = legend.iconSize().width()
    scroll = legend.style().pixelMetric(legend.style().PixelMetric.PM_ScrollBarExtent)
    return icon + 4 * legend.spacing() + 16 + 2 * legend.frameWidth() + scroll


def readable_height(view) -> int:
    """Room for READABLE_ROWS labelled rows of a run (all of them when it has fewer)."""
    return max(VIEW_MIN_HEIGHT, min(len(view.layout_rows), READABLE_ROWS) * ROW_PX + AXIS_PX)


def info_html(info: dict) -> str:
    """The what/where of a point, one line each."""
    esc = html.escape
    parts = [f"<b>{esc(info.get('row', info['location']))}</b> ({esc(info['location'])}, {esc(info['process'])}"
             f"{', ' + esc(info['node']) if info.get('node') else ''}) at <b>{format_time(info['time'])}</b>"]
    if "value" in info:
        share = f" ({info['share']:.0%} of the pixel)" if "share" in info else ""
        parts.append(f"value: {esc(str(info['value']))}{share}")
    if "state" in info:
        parts.append(f"state: {esc(info['state'])} for {format_time(info['state_end'] - info['state_begin'])}")
    if "callpath" in info:
        parts.append(f"call path: {esc(info['callpath'])}")
    if info.get("counters"):
        parts.append("rates: " + ", ".join(f"{esc(k)} {v:.3g}/s" for k, v in list(info["counters"].items())[:4]))
    if info.get("events"):
        parts.append("events: " + ", ".join(f"{esc(n)}={esc(v)}" for _, n, v in info["events"][:6]))
    for m in info.get("messages", [])[:3]:
        arrow = "→" if m["direction"] == "send" else "←"
        parts.append(f"message {arrow} {esc(m['partner'])}, {m['size']} B, "
                     f"sent {format_time(m['send_time'])}, received {format_time(m['recv_time'])}")
    return " · ".join(parts)


def _prepare(exp, progress, cancel) -> None:
    """A run's timeline made ready on its lane: the overview, then the pictures' kernels."""
    if not getattr(exp, "timeline_prepared", True):
        exp.prepare_timeline(progress, cancel)
    timeline_data.warm_kernels()
