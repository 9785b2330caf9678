"""Named layouts for an analyst's tasks, one click apart (View > Layout and the toolbar).

* Advisor first (Cube's habit): metric | call | system trees across the top, the
  Advisor below them with its whole tree; timeline, scaling, histograms in tabs.
* Timeline first (Paraver's habit): a tall timeline with the histograms beside it,
  trees and Advisor in a low strip of tabs.
* Overview: every pane at once, for the first look at a new series (the first-run layout).

A layout is a list of steps over dock titles; sizes are fractions of the window so
that each fits 1280x800 as well as 1920x1080. Docks a layout does not name keep
their last place (they are tabbed behind the first dock of the bottom row).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QToolBar

Area = Qt.DockWidgetArea
H, V = Qt.Orientation.Horizontal, Qt.Orientation.Vertical

ADVISOR, TIMELINE, OVERVIEW = "advisor", "timeline", "overview"


@dataclass(frozen=True)
class Layout:
    key: str
    label: str
    tip: str
    top: tuple[str, ...] = ()             # docks side by side in the top area
    bottom: tuple[str, ...] = ()          # docks side by side in the bottom area
    tabs: dict = field(default_factory=dict)   # dock -> docks tabbed behind it
    raised: tuple[str, ...] = ()          # tabs brought to the front
    top_share: float = 0.4                # of the height, for the top row
    widths: dict = field(default_factory=dict)  # "top"/"bottom" -> fractions of the width
    hidden: tuple[str, ...] = ()


LAYOUTS = {
    ADVISOR: Layout(
        ADVISOR, "Advisor first", "Metric, call and system trees above the Advisor (as in Cube)",
        top=("Metrics", "Call tree", "System tree"), bottom=("Advisor",),
        tabs={"System tree": ("Topology", "Distribution"), "Advisor": ("Timeline", "Scaling", "Histograms", "Log")},
        raised=("Advisor", "System tree"), top_share=0.33, widths={"top": (0.3, 0.38, 0.32)}),
    TIMELINE: Layout(
        TIMELINE, "Timeline first", "A tall timeline with the histograms beside it (as in Paraver)",
        top=("Timeline", "Histograms"), bottom=("Advisor", "Call tree"),
        tabs={"Advisor": ("Metrics", "Scaling", "Log"), "Call tree": ("System tree", "Topology", "Distribution")},
        raised=("Timeline", "Histograms", "Advisor", "Call tree"), top_share=0.62,
        widths={"top": (0.74, 0.26), "bottom": (0.55, 0.45)}),
    OVERVIEW: Layout(OVERVIEW, "Overview", "Every pane at once, for the first look at a new series"),
}
SIDE_WIDTH = 0.18         # of the window: experiments and bookmarks
SIDE_MAX = 330


def apply(window, key: str) -> None:
    """Arrange the window's docks as layout `key` (Overview: the first-run layout)."""
    layout = LAYOUTS[key]
    window.layout_name = key
    if key == OVERVIEW:
        window.reset_layout()
        check(window, key)
        return
    docks = window.docks
    size = window.size()
    side = [t for t in ("Experiments", "Bookmarks") if t in docks]
    named = set(side) | set(layout.top) | set(layout.bottom) | {t for ts in layout.tabs.values() for t in ts}
    rest = [t for t in docks if t not in named]
    for dock in docks.values():
        dock.setFloating(False)
        window.removeDockWidget(dock)
    for title in side:
        window.addDockWidget(Area.LeftDockWidgetArea, docks[title], V)
    # both rows in one dock area: the first of each row split vertically, then each row split
    # sideways (sizes across two areas were not honoured)
    top = [docks[t] for t in layout.top if t in docks]
    bottom = [docks[t] for t in layout.bottom if t in docks]
    rows = [r for r in (top, bottom) if r]
    if rows:
        window.addDockWidget(Area.BottomDockWidgetArea, rows[0][0], V)
        if len(rows) == 2:
            window.splitDockWidget(rows[0][0], rows[1][0], V)
        for row in rows:
            for before, dock in zip(row, row[1:]):
                window.splitDockWidget(before, dock, H)
    anchor = next((t for t in layout.bottom + layout.top if t in docks), None)
    # tabs last: tabbing before the splits are done leaves a stray tab bar (Qt 6.11)
    for owner, titles in list(layout.tabs.items()) + [(anchor, tuple(rest))]:
        for title in titles:
            if title in docks and owner in docks:
                window.tabifyDockWidget(docks[owner], docks[title])
    for dock in docks.values():
        dock.show()
    for title in layout.hidden:
        if title in docks:
            docks[title].hide()
    for title in layout.raised:
        if title in docks:
            docks[title].raise_()
    _resize(window, layout, size)
    check(window, key)
    fit = getattr(window, "fit_timeline", None)
    if fit is not None:                   # the timeline tabbed or not: a profile's one line or not
        fit()


def _resize(window, layout: Layout, size) -> None:
    """Sizes as fractions of the window, asked one after the other once laid out
    (Qt honoured only some of them when asked at once)."""
    docks = window.docks
    w, h = max(size.width(), 640), _dock_height(window, size.height())
    steps = []
    side = [docks[t] for t in ("Experiments",) if t in docks]
    if side:
        steps.append((side, [min(SIDE_MAX, int(w * SIDE_WIDTH))], H))
    top = [docks[t] for t in layout.top if t in docks]
    bottom = [docks[t] for t in layout.bottom if t in docks]
    if top and bottom:
        steps.append(([top[0], bottom[0]], [int(h * layout.top_share), int(h * (1 - layout.top_share))], V))
    for row, docks_in_row in (("top", top), ("bottom", bottom)):
        shares = layout.widths.get(row)
        if shares and len(docks_in_row) > 1:
            steps.append((docks_in_row, [int(w * s) for s in shares[:len(docks_in_row)]], H))
    # the window back to its size (another layout's minimum could have grown it), then the
    # sizes again: shrinking the window took from every dock
    _in_turn(window, steps + [size] + steps)


def _in_turn(window, steps: list) -> None:
    """Each request laid out before the next (Qt honoured only some when asked at once)."""
    if not steps:
        return
    step = steps[0]
    if isinstance(step, tuple):
        window.resizeDocks(*step)
    elif window.size() != step:
        window.resize(step)
    QTimer.singleShot(0, window, lambda: _in_turn(window, steps[1:]))


def _dock_height(window, height: int) -> int:
    """The height the docks share: the window's less its menu, toolbars and status bars and
    the docks' title bars (asking for more made Qt grow the window past the screen)."""
    bars = window.menuBar().height() + window.statusBar().height()
    bars += sum(tb.height() for tb in window.findChildren(QToolBar) if tb.isVisible() and tb.parent() is window)
    title = window.docks and next(iter(window.docks.values())).fontMetrics().height() + 10
    return max(height - bars - 2 * (title or 0), 300)


def check(window, key: str) -> None:
    for act in getattr(window, "layout_actions", {}).values():
        act.setChecked(act.data() == key)


def install(window, toolbar, menu) -> dict[str, QAction]:
    """View > Layout and one toolbar button per layout; returns the actions by key."""
    group = QActionGroup(window)
    group.setExclusive(True)
    sub = menu.addMenu("&Layout")
    actions = {}
    for i, layout in enumerate(LAYOUTS.values(), start=1):
        act = QAction(layout.label, window, checkable=True)
        act.setData(layout.key)
        act.setToolTip(layout.tip)
        act.setShortcut(f"Ctrl+{i}")
        act.triggered.connect(lambda _c=False, k=layout.key: apply(window, k))
        group.addAction(act)
        sub.addAction(act)
        toolbar.addAction(act)
        actions[layout.key] = act
    window.layout_actions = actions
    return actions
