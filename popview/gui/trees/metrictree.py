"""The metric tree: left-most of the coupled trees; its selection colours the others.

Two hierarchies of the time metrics: by paradigm (as stored: MPI with its
classes, OpenMP, I/O...) or by activity (computation, communication,
synchronisation, management, I/O), with only what the data contain."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel

from popview.gui.trees.models import Forest, ValueTreeModel
from popview.gui.trees.pane import TreePane
from popview.gui.trees.values import ACTIVITY, PARADIGM, ProfileValues, implausible_counts
from popview.gui.widgets.apart import ApartDelegate
from popview.gui.widgets.units import focus_text, is_time

IMPLAUSIBLE = QColor("#c0392b")


class MetricTreeModel(ValueTreeModel):
    value_header = "Total"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.keys: list[str] = []
        self.pv: ProfileValues | None = None
        self.implausible: dict[str, str] = {}      # key -> why its total cannot be a measurement

    def build(self, pv: ProfileValues, hierarchy: str) -> None:
        self.pv = pv
        keys, parents = [], []

        def walk(key: str, parent: int) -> None:
            keys.append(key)
            parents.append(parent)
            me = len(keys) - 1
            for c in pv.children(key, hierarchy):
                walk(c, me)

        for root in pv.roots(hierarchy):
            walk(root, -1)
        self.keys = keys
        self.set_forest(Forest(np.array(parents, np.int64)))

    def node_of_key(self, key: str) -> int:
        return self.keys.index(key) if key in self.keys else -1

    def name(self, node: int) -> str:
        n = self.pv.node(self.keys[node])
        warn = "\u26a0 " if n.key in self.implausible else ""
        # a sub-metric in its parent's unit does not repeat it (the parent and the values say it): the
        # Metrics pane at 1600x1000 cut "Computation outside OpenMP (sec)" to "Computation o..."
        # and does not repeat its parent's name: "Computation outside OpenMP" under "Computation" reads
        # "Outside OpenMP" (the tooltip has the full name)
        parent = int(self.forest.parent[node]) if node < len(self.forest.parent) else -1
        up = self.pv.node(self.keys[parent]) if parent >= 0 else None
        name = n.name
        if up is not None and name.startswith(up.name + " ") and len(name) > len(up.name) + 1:
            rest = name[len(up.name) + 1:]
            name = rest[0].upper() + rest[1:]
        # nor does a time metric say "(sec)": its values read 13.12 s, 843.3 ms, 57.19 µs
        same = up is not None and up.unit == n.unit
        return warn + (f"{name} ({n.unit})" if n.unit and not same and not is_time(n.unit) else name)

    def tooltip(self, node: int) -> str:
        n = self.pv.node(self.keys[node])
        why = self.implausible.get(n.key, "")
        return f"{n.name} [{n.key}]\n{n.description}\n{why}".strip()

    def foreground(self, node: int):
        return IMPLAUSIBLE if self.keys[node] in self.implausible else super().foreground(node)

    def root_total(self) -> float:
        """Percent of the root is per hierarchy branch: comp as a share of time."""
        return float("nan")

    def branch_root_value(self, node: int) -> float:
        """The root metric above `node`. A time root is compared with the largest time root
        (a wait-state metric stored as a root is a share of the time, not 100 % of itself);
        any other root (visits, a counter) is 100 % of itself."""
        anc = self.forest.ancestors(node)
        if anc:
            return float(self.incl[anc[0]])
        unit = self.node_unit(node)
        if unit != "sec":                # visits, each counter: a percentage of its own total
            return float(abs(self.incl[node]))
        same = [r for r in self.forest.children(-1) if self.node_unit(r) == unit]
        return float(np.max(np.abs(self.incl[same])))

    def shown(self, node: int) -> float:
        if self.mode == "percent_root":
            total = self.branch_root_value(node)
            return 100.0 * self.raw(node) / total if total else float("nan")
        return super().shown(node)

    def fraction(self, node: int) -> float:
        """Each metric against its root metric: units differ between branches."""
        if self.mode == "percent_selection":
            return super().fraction(node)
        v = self.shown(node) if self.mode == "difference" else self.raw(node)
        total = self.branch_root_value(node)
        return max(-1.0, min(1.0, v / abs(total))) if total and np.isfinite(v) else 0.0

    def node_unit(self, node: int) -> str:
        return self.pv.node(self.keys[node]).unit

    def unit_of(self, node: int) -> str:
        return self.pv.node(self.keys[node]).unit


def without_unit(text: str) -> str:
    """A metric's name without its unit ' (occ)': the values show it."""
    base, sep, unit = text.rpartition(" (")
    return base if sep and unit.endswith(")") else text


class MetricTreePane(TreePane):
    def __init__(self, state, parent=None):
        super().__init__(state, MetricTreeModel(), parent)
        self.view.setItemDelegateForColumn(0, ApartDelegate(self.view, simplify=without_unit))
        self.hierarchy = PARADIGM
        self.hierarchy_combo = QComboBox(self)
        self.hierarchy_combo.addItem("Time by paradigm", PARADIGM)
        self.hierarchy_combo.addItem("Time by activity", ACTIVITY)
        self.hierarchy_combo.setToolTip("How the time metrics are grouped")
        self.hierarchy_combo.currentIndexChanged.connect(
            lambda i: self.set_hierarchy(self.hierarchy_combo.itemData(i)))
        self.scope_label = QLabel(self)
        self.scope_label.setStyleSheet("color: #666;")
        bar = QHBoxLayout()
        bar.addWidget(self.scope_label)
        bar.addStretch(1)
        bar.addWidget(self.hierarchy_combo)
        self.layout_.insertLayout(0, bar)
        state.metricSelected.connect(self._on_metric_selected)
        state.focusChanged.connect(self._show_scope)
        self._show_scope(state.focus)
        self.reload()

    def _show_scope(self, focus) -> None:
        """The trees hold the whole run's profile whatever the focus (the Advisor follows the
        focus): an analyst reading Time 374 s under "Focus: 7.02 s - 14.04 s" took it for the
        window's, so the pane says so when the focus is not the whole run."""
        partial = focus is not None and focus.kind != "whole"
        self.scope_label.setText("Whole run (the focus is the Advisor's)" if partial else "")
        self.scope_label.setToolTip("The metric, call and system trees show the profile of the whole run; "
                                    f"the focus ({focus_text(focus)}) applies to the Advisor" if partial else "")

    def _on_metric_selected(self, key: str) -> None:
        node = self.model.node_of_key(key)
        if node >= 0 and node != self.model.selected:
            self.select_node(node)

    def view_state(self) -> dict:
        return {"hierarchy": self.hierarchy, "expanded": [self.model.keys[n] for n in sorted(self.model.expanded)]}

    def restore_view_state(self, d: dict) -> None:
        if d.get("hierarchy") in (PARADIGM, ACTIVITY):
            self.set_hierarchy(d["hierarchy"])
        for key in d.get("expanded", []):
            node = self.model.node_of_key(key)
            if node >= 0:
                self.view.expand(self.model.index_of(node))

    def set_hierarchy(self, hierarchy: str) -> None:
        if hierarchy != self.hierarchy:
            self.hierarchy = hierarchy
            i = self.hierarchy_combo.findData(hierarchy)
            if i != self.hierarchy_combo.currentIndex():
                self.hierarchy_combo.setCurrentIndex(i)
            if self.pv is not None:
                self.build()
                self.refresh()

    def build(self) -> None:
        self.hierarchy_combo.setEnabled(self.pv.has_activities())
        hierarchy = self.hierarchy if self.pv.has_activities() else PARADIGM
        self.model.build(self.pv, hierarchy)
        self.state.set_selection_scope(metric_exclusive=False)   # every node starts collapsed
        key = self.state.metric
        if self.model.node_of_key(key) < 0:
            key = self.pv.first_metric()
            if key is None:
                self.status.setText("The profile has no metrics.")
                return
        self.select_node(self.model.node_of_key(key))
        self.state.select_metric(key)

    def refresh(self) -> None:
        if self.pv is None:
            return
        keys = self.model.keys
        incl = np.array([self.pv.total(k) for k in keys])
        excl = np.array([self.pv.total(k, metric_exclusive=True) for k in keys])
        ref = self.reference_values()
        ref_incl = ref_excl = None
        if ref is not None:
            ref_incl = np.array([ref.total(k) if _known(ref, k) else np.nan for k in keys])
            ref_excl = np.array([ref.total(k, metric_exclusive=True) if _known(ref, k) else np.nan for k in keys])
        node = self.model.node_of_key(self.state.metric)
        unit = self.model.unit_of(node) if node >= 0 else ""
        duration = (self.state.current.info().get("duration_ns") or 0) / 1e9 if self.state.current else 0
        self.model.implausible = implausible_counts(self.pv, keys, duration)
        self.model.set_values(incl, excl, unit, ref_incl, ref_excl)
        self.model.scale = float(np.nanmax(np.abs(incl))) if len(incl) else 0.0
        self.update_legend()
        self.status.setText("; ".join(f"\u26a0 {self.pv.node(k).name}: {why}"
                                      for k, why in self.model.implausible.items()))

    def update_legend(self) -> None:
        if self.model.mode in ("absolute", "percent_root") or (self.model.mode == "difference"
                                                              and not self.model.compares()):
            if self.model.signed:               # an algebra difference: its values gain and lose
                self.legend.set_range("+100 %", low_text="-100 % of the metric's root", signed=True)
            else:
                self.legend.set_range("100 % of the metric's root")     # no reference: the values themselves
        elif self.model.mode == "difference":
            self.legend.set_range("+100 %", low_text="-100 % of the metric's root", signed=True)
        else:
            super().update_legend()

    def node_selected(self, node: int) -> None:
        self.state.set_selection_scope(metric_exclusive=node in self.model.expanded)
        self.state.select_metric(self.model.keys[node])

    def node_expanded(self, node: int, expanded: bool) -> None:
        self.state.set_selection_scope(metric_exclusive=expanded)


def _known(pv: ProfileValues, key: str) -> bool:
    try:
        pv.node(key)
    except KeyError:
        return False
    return True
