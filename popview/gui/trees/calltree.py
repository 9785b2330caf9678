"""The call tree: the selected metric over call paths; its selection feeds the system tree.

Search filters call paths by region name (matches and their callers stay);
"hottest path" follows the largest inclusive child down to where the time
is spent; the context menu sets the focus of analysis on a call path."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLineEdit, QMenu, QToolButton

from popview.analysis.focus import Focus
from popview.gui.annotations import context_actions, marked_callpaths
from popview.gui.trees.models import Forest, ValueTreeModel, italic
from popview.gui.trees.pane import TreePane
from popview.gui.trees.source import callpath_map
from popview.gui.trees.values import ProfileValues

ARTIFICIAL_ROOTS = {"THREADS": "threads created by the program (pthreads)", "TASKS": "OpenMP tasks",
                    "KERNELS": "GPU kernels"}
MAX_EXPANDED_MATCHES = 200
AUTO_EXPAND_CHILDREN = 200
MAX_SAVED_EXPANDED = 500        # a new tree shows the children of its roots up to this many


class CallTreeModel(ValueTreeModel):
    value_header = "Value"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pv: ProfileValues | None = None
        self._names: list[str] = []
        self._italic = italic()

    def build(self, pv: ProfileValues) -> None:
        self.pv = pv
        self._names = [r.name for r in pv.profile.regions]
        self.set_forest(Forest(pv.profile.callpath_parent))

    def name(self, node: int) -> str:
        return self._names[self.pv.profile.callpath_region[node]]

    def is_artificial(self, node: int) -> bool:
        region = self.pv.profile.regions[self.pv.profile.callpath_region[node]]
        return (self.forest.parent[node] < 0 and region.name in ARTIFICIAL_ROOTS) or region.role == "artificial"

    def font(self, node: int):
        return self._italic if self.is_artificial(node) else None

    def tooltip(self, node: int) -> str:
        region = self.pv.profile.regions[self.pv.profile.callpath_region[node]]
        lines = [self.pv.profile.path(node), f"{region.paradigm} {region.role}"]
        if region.file:
            lines.append(f"{region.file}:{region.line}")
        if self.is_artificial(node):
            lines.append(f"artificial root: {ARTIFICIAL_ROOTS.get(region.name, 'added by the measurement')}")
        return "\n".join(lines)


def matching_callpaths(pv: ProfileValues, text: str) -> tuple[np.ndarray, np.ndarray]:
    """(call paths whose region name contains `text`, mask of those and their callers)."""
    p = pv.profile
    needle = text.lower()
    region_hit = np.array([needle in r.name.lower() for r in p.regions], bool)
    hit = region_hit[p.callpath_region] if len(region_hit) else np.zeros(p.n_callpaths, bool)
    visible = hit.copy()
    ids = np.flatnonzero(hit)
    while len(ids):
        up = p.callpath_parent[ids]
        up = np.unique(up[up >= 0])
        ids = up[~visible[up]]
        visible[ids] = True
    return np.flatnonzero(hit), visible


def hottest_path(pv: ProfileValues, incl: np.ndarray, excl: np.ndarray, start: int = -1) -> list[int]:
    """From `start` (or the hottest root), follow the child with the largest inclusive
    value while it outweighs the node's own exclusive value."""
    if start < 0:
        roots = pv.profile.roots()
        if not len(roots):
            return []
        start = int(roots[np.argmax(incl[roots])])
    path = [start]
    node = start
    while True:
        kids = pv.profile.children(node) if pv.profile.subtree_size[node] > 1 else np.zeros(0, np.int64)
        if not len(kids):
            break
        best = int(kids[np.argmax(incl[kids])])
        if incl[best] <= excl[node]:
            break
        path.append(best)
        node = best
    return path


class CallTreePane(TreePane):
    def __init__(self, state, parent=None):
        super().__init__(state, CallTreeModel(), parent)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Filter call paths by name")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(lambda: self.set_filter(self.search.text()))
        self.search.textChanged.connect(lambda t: self.set_filter("") if not t else None)
        self.hot_button = QToolButton(self)
        self.hot_button.setText("Hottest path")
        self.hot_button.setToolTip("Expand down to where most of the selected metric is spent")
        self.hot_button.clicked.connect(self.expand_hottest)
        self.sort_box = QCheckBox("Sort by value", self)
        self.sort_box.toggled.connect(self.model.set_sorted)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.hot_button)
        bar.addWidget(self.sort_box)
        self.layout_.insertLayout(0, bar)
        self.focus_action = QAction("Set as focus of analysis", self)
        self.focus_action.triggered.connect(self.focus_on_current)
        state.metricSelected.connect(lambda _m: self.refresh())
        state.selectionScopeChanged.connect(self._on_scope)
        state.callpathSelected.connect(self._on_callpath_selected)
        self._metric_scope = None
        self.reload()

    def build(self) -> None:
        self.model.build(self.pv)
        self.search.clear()
        self.state.set_selection_scope(callpath_exclusive=False)
        roots = self.pv.profile.roots()
        if len(roots) <= 8:
            for r in roots:
                if len(self.model.forest.children(int(r))) <= AUTO_EXPAND_CHILDREN:
                    self.view.expand(self.model.index_of(int(r)))

    def refresh(self) -> None:
        if self.pv is None or self.state.metric is None:
            return
        key, excl_metric = self.state.metric, self.state.metric_exclusive
        self._metric_scope = (key, excl_metric)
        try:
            incl, excl = self.pv.callpath_values(key, excl_metric)
            unit = self.pv.node(key).unit
        except KeyError:
            self.status.setText(f"The metric {key!r} is not in this profile.")
            return
        ref_incl = ref_excl = None
        ref = self.reference_values()
        if ref is not None:
            ref_incl, ref_excl = _mapped(ref, key, excl_metric, callpath_map(self.pv, ref))
        self.model.set_values(incl, excl, unit, ref_incl, ref_excl)
        self.update_legend()
        name = self.pv.node(key).name + (" (exclusive)" if excl_metric else "")
        note = self._mode_note()
        if excl_metric and not np.any(excl):
            note = ": nothing outside its sub-metrics (collapse the metric to see its total)"
        self.status.setText(f"{name} per call path" + note)

    def _mode_note(self) -> str:
        if self.state.value_mode == "difference" and self.reference_values() is None:
            return ": choose a reference experiment (Experiments list, context menu) to see differences"
        return self.difference_note()

    def _on_scope(self) -> None:
        if self._metric_scope != (self.state.metric, self.state.metric_exclusive):
            self.refresh()

    def _on_callpath_selected(self, cp: int) -> None:
        if cp >= 0 and cp != self.model.selected and self.pv is not None and cp < self.pv.profile.n_callpaths:
            self.select_node(cp)

    def node_selected(self, node: int) -> None:
        self.state.set_selection_scope(callpath_exclusive=node in self.model.expanded)
        self.state.select_callpath(node)

    def node_expanded(self, node: int, expanded: bool) -> None:
        self.state.set_selection_scope(callpath_exclusive=expanded)

    # ---- search, hottest path, focus --------------------------------------------------
    def set_filter(self, text: str) -> None:
        if self.pv is None:
            return
        if not text:
            self.model.forest.visible = None
            self.model.forest.invalidate()
            self.model.set_forest(self.model.forest)
            self.status.setText("")
            return
        hits, visible = matching_callpaths(self.pv, text)
        forest = self.model.forest
        forest.visible = visible
        forest.invalidate()
        self.model.set_forest(forest)
        for cp in hits[:MAX_EXPANDED_MATCHES]:
            for a in forest.ancestors(int(cp)):
                self.view.expand(self.model.index_of(a))
        if len(hits):
            self.view.setCurrentIndex(self.model.index_of(int(hits[0])))
        self.status.setText(f"{len(hits)} call paths match {text!r}")

    def expand_hottest(self) -> None:
        if self.pv is None:
            return
        path = hottest_path(self.pv, self.model.incl, self.model.excl)
        for node in path[:-1]:
            self.view.expand(self.model.index_of(node))
        if path:
            self.select_node(path[-1])

    def focus_on_current(self) -> None:
        node = self.model.node_of(self.view.currentIndex())
        if node >= 0:
            self.state.set_focus(Focus.on_callpath(self.pv.profile.path(node)))

    def extra_menu(self, menu: QMenu, node: int) -> None:
        menu.addAction(self.focus_action)
        menu.addAction("Expand hottest path below", lambda: self._hottest_from(node))
        menu.addSeparator()
        for action in context_actions(self.state, "callpath", menu, callpath=node):
            menu.addAction(action)

    def notes_by_node(self) -> dict[int, list[str]]:
        return {cp: texts for cp, texts in marked_callpaths(self.state).items()
                if cp is not None and 0 <= cp < self.pv.profile.n_callpaths}

    def _hottest_from(self, node: int) -> None:
        path = hottest_path(self.pv, self.model.incl, self.model.excl, start=node)
        for n in path[:-1]:
            self.view.expand(self.model.index_of(n))
        self.select_node(path[-1])

    def view_state(self) -> dict:
        """Sort, filter and expanded call paths (by name path, so they survive re-conversion)."""
        if self.pv is None:
            return {}
        expanded = sorted(self.model.expanded)[:MAX_SAVED_EXPANDED]
        return {"sorted": self.sort_box.isChecked(), "filter": self.search.text(),
                "expanded": [self.pv.profile.path(n) for n in expanded]}

    def restore_view_state(self, d: dict) -> None:
        if self.pv is None:
            return
        self.sort_box.setChecked(bool(d.get("sorted", False)))
        if d.get("filter"):
            self.search.setText(d["filter"])
            self.set_filter(d["filter"])
        for path in d.get("expanded", []):
            cp = self.pv.profile.find(path)
            if cp is not None:
                self.view.expand(self.model.index_of(cp))

    def menu_actions(self) -> dict:
        hottest = QAction("Expand &hottest call path", self)
        hottest.triggered.connect(self.expand_hottest)
        return {"Analysis": [self.focus_action, hottest]}


def _mapped(ref: ProfileValues, key: str, metric_exclusive: bool, cp_map: np.ndarray):
    """Reference values per call path of the current profile (nan where absent)."""
    try:
        r_incl, r_excl = ref.callpath_values(key, metric_exclusive)
    except KeyError:
        nan = np.full(len(cp_map), np.nan)
        return nan, nan
    ok = cp_map >= 0
    out = []
    for arr in (r_incl, r_excl):
        v = np.full(len(cp_map), np.nan)
        v[ok] = arr[cp_map[ok]]
        out.append(v)
    return out[0], out[1]
