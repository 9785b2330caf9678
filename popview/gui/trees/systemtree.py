"""The system tree: node > process > thread (or GPU stream), with the value of
the selected metric and call path on each location. Colours compare each row
with the largest row of its level, so imbalance stands out."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtGui import QColor

from popview.gui.annotations import context_actions, marked_locations
from popview.gui.trees.models import Forest, ValueTreeModel, italic
from popview.gui.trees.pane import TreePane
from popview.gui.trees.source import callpath_map
from popview.gui.widgets.units import format_value

NODE, PROCESS, LOCATION = 0, 1, 2
GPU_COLOUR = QColor("#1b7837")
SCALE_NOTE = "(the largest location; each level to its own largest)"


@dataclass
class SystemLayout:
    """The system hierarchy flattened to one id space: nodes, then processes, then locations."""

    parent: np.ndarray
    level: np.ndarray
    names: list[str]
    kinds: list[str]              # per location: thread | gpu | metric
    first_location: int           # id of location 0
    loc_process: np.ndarray       # process index per location (-1 when flat)
    proc_node: np.ndarray

    @property
    def n_locations(self) -> int:
        return len(self.kinds)

    def location_id(self, loc: int) -> int:
        return self.first_location + loc


def system_layout(defs, n_locations: int) -> SystemLayout:
    """From the experiment's definitions, or a flat list when they do not match the profile."""
    if defs is None or len(defs.locations) != n_locations or not defs.processes:
        names = [f"location {i}" for i in range(n_locations)]
        return SystemLayout(np.full(n_locations, -1, np.int64), np.full(n_locations, LOCATION), names,
                            ["thread"] * n_locations, 0, np.full(n_locations, -1), np.zeros(0, np.int64))
    n_nodes = max(len(defs.nodes), 1 + max(p.node for p in defs.processes))
    node_names = [defs.nodes[i] if i < len(defs.nodes) else f"node {i}" for i in range(n_nodes)]
    procs = defs.processes
    proc_node = np.array([max(p.node, 0) for p in procs], np.int64)
    loc_proc = np.array([loc.process for loc in defs.locations], np.int64)
    parent = np.concatenate([np.full(n_nodes, -1), proc_node, n_nodes + loc_proc]).astype(np.int64)
    level = np.concatenate([np.full(n_nodes, NODE), np.full(len(procs), PROCESS), np.full(n_locations, LOCATION)])
    names = node_names + [p.name or f"rank {p.rank}" for p in procs] + [loc.name for loc in defs.locations]
    kinds = [loc.kind for loc in defs.locations]
    return SystemLayout(parent, level, names, kinds, n_nodes + len(procs), loc_proc, proc_node)


def aggregate(layout: SystemLayout, loc_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(inclusive, exclusive) per system-tree node from values per location."""
    n = len(layout.parent)
    incl = np.zeros(n)
    excl = np.zeros(n)
    f = layout.first_location
    incl[f:] = loc_values
    excl[f:] = loc_values
    if f:
        n_nodes = f - len(layout.proc_node)
        proc = np.bincount(layout.loc_process, weights=loc_values, minlength=len(layout.proc_node))
        incl[n_nodes:f] = proc
        incl[:n_nodes] = np.bincount(layout.proc_node, weights=proc, minlength=n_nodes)
    return incl, excl


class SystemTreeModel(ValueTreeModel):
    value_header = "Value"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.layout: SystemLayout | None = None
        self._italic = italic()
        self._level_max = [0.0, 0.0, 0.0]
        self._diff_level_max = [0.0, 0.0, 0.0]

    def build(self, layout: SystemLayout) -> None:
        self.layout = layout
        self.set_forest(Forest(layout.parent))

    def location_of(self, node: int) -> int:
        f = self.layout.first_location
        return node - f if node >= f else -1

    def name(self, node: int) -> str:
        loc = self.location_of(node)
        if loc >= 0 and self.layout.kinds[loc] == "gpu":
            return f"{self.layout.names[node]} [GPU]"
        return self.layout.names[node]

    def font(self, node: int):
        loc = self.location_of(node)
        return self._italic if loc >= 0 and self.layout.kinds[loc] != "thread" else None

    def tooltip(self, node: int) -> str:
        loc = self.location_of(node)
        if loc < 0:
            return self.layout.names[node]
        kind = {"gpu": "GPU location", "metric": "metric location (no call paths)"}.get(self.layout.kinds[loc], "thread")
        return f"{self.layout.names[node]} (location {loc}, {kind})"

    def set_values(self, incl, excl, unit, ref_incl=None, ref_excl=None) -> None:
        if self.layout is not None and len(incl) == len(self.layout.level):
            lv = self.layout.level
            self._level_max = [float(np.max(np.abs(incl[lv == k]), initial=0.0)) for k in (NODE, PROCESS, LOCATION)]
            if ref_incl is not None and len(ref_incl) == len(incl):     # differences: each level its own scale too
                d = np.nan_to_num(np.abs(np.asarray(incl, float) - np.asarray(ref_incl, float)))
                self._diff_level_max = [float(np.max(d[lv == k], initial=0.0)) for k in (NODE, PROCESS, LOCATION)]
        super().set_values(incl, excl, unit, ref_incl, ref_excl)

    def level_max(self, node: int) -> float:
        return self._level_max[int(self.layout.level[node])]

    def fraction(self, node: int) -> float:
        if self.mode in ("absolute", "percent_root"):
            top = self.level_max(node)
            return max(-1.0, min(1.0, self.raw(node) / top)) if top else 0.0
        if self.compares():       # a process's difference is its threads' summed: scaled on its own level
            top = self._diff_level_max[int(self.layout.level[node])]
            return max(-1.0, min(1.0, self.shown(node) / top)) if top else 0.0
        return super().fraction(node)

    def foreground(self, node: int):
        loc = self.location_of(node)
        return GPU_COLOUR if loc >= 0 and self.layout.kinds[loc] == "gpu" else super().foreground(node)


class SystemTreePane(TreePane):
    def __init__(self, state, parent=None):
        super().__init__(state, SystemTreeModel(), parent)
        state.metricSelected.connect(lambda _m: self.refresh())
        state.callpathSelected.connect(lambda _c: self.refresh())
        state.selectionScopeChanged.connect(self.refresh)
        state.locationSelected.connect(self._on_location_selected)
        self.reload()

    def extra_menu(self, menu, node: int) -> None:
        loc = self.model.location_of(node)
        if loc >= 0:
            for action in context_actions(self.state, "location", menu, location=loc):
                menu.addAction(action)

    def notes_by_node(self) -> dict[int, list[str]]:
        first = self.model.layout.first_location
        n = self.pv.profile.n_locations
        return {first + loc: texts for loc, texts in marked_locations(self.state).items()
                if loc is not None and 0 <= loc < n}

    def build(self) -> None:
        defs = getattr(self.state.current, "definitions", None)
        layout = system_layout(defs, self.pv.profile.n_locations)
        self.model.build(layout)
        for node in np.flatnonzero(layout.level == 0)[:64]:
            self.view.expand(self.model.index_of(int(node)))

    def location_values(self, pv=None, cp_map=None) -> np.ndarray:
        pv = pv or self.pv
        cp = self.state.callpath
        if cp_map is not None and cp >= 0:
            cp = int(cp_map[cp]) if cp < len(cp_map) else -1
            if cp < 0:
                return np.full(pv.profile.n_locations, np.nan)
        if cp >= pv.profile.n_callpaths:
            cp = -1
        return pv.location_values(self.state.metric, self.state.metric_exclusive, cp, self.state.callpath_exclusive)

    def refresh(self) -> None:
        if self.pv is None or self.model.layout is None:
            return
        try:
            loc_values = self.location_values()
            unit = self.pv.node(self.state.metric).unit
        except KeyError:
            self.status.setText(f"The metric {self.state.metric!r} is not in this profile.")
            return
        incl, excl = aggregate(self.model.layout, loc_values)
        ref_incl = ref_excl = None
        ref = self.reference_values()
        if ref is not None and ref.profile.n_locations == self.pv.profile.n_locations:
            try:
                r_loc = self.location_values(ref, callpath_map(self.pv, ref))
            except KeyError:
                r_loc = np.full(len(loc_values), np.nan)
            ref_incl, ref_excl = aggregate(self.model.layout, r_loc)
        self.model.set_values(incl, excl, unit, ref_incl, ref_excl)
        if ref_incl is not None:                  # colour differences against the largest per location
            diff = np.abs(incl - ref_incl)[self.model.layout.first_location:]
            self.model.diff_scale = float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0
        self.update_legend()
        cp = self.state.callpath
        where = self.pv.profile.name(cp) if 0 <= cp < self.pv.profile.n_callpaths else "all call paths"
        scope = " (exclusive)" if cp >= 0 and self.state.callpath_exclusive else ""
        self.status.setText(f"{self.pv.node(self.state.metric).name} of {where}{scope} per location"
                            + self._why_no_difference(ref))
        self.status.setToolTip(self.pv.profile.path(cp) if 0 <= cp < self.pv.profile.n_callpaths else "")

    def _why_no_difference(self, ref) -> str:
        if self.state.value_mode != "difference":
            return ""
        if self.model.compares():
            return self.difference_note()
        if ref is None:
            return " (absolute: no reference run chosen; Experiments > right-click a run)"
        return (f" (absolute: the reference run has {ref.profile.n_locations} locations, this one "
                f"{self.pv.profile.n_locations}; differences per location need the same locations)")

    def update_legend(self) -> None:
        """The legend's number is the largest location's (its deepest level): the levels above,
        each coloured to its own largest, hold larger values, which the text says (it read
        '4.974 s (largest of each level)' under a rank of 7.248 s)."""
        if self.model.mode in ("absolute", "percent_root") and self.model.layout is not None:
            f = self.model.layout.first_location
            top = float(np.max(np.abs(self.model.incl[f:]))) if len(self.model.incl) > f else 0.0
            total = self.model.root_total()
            largest = (f"{100 * top / total:.3g} %" if self.model.mode == "percent_root" and total
                       else format_value(top, self.model.unit))    # in the unit of the values on show
            if self.model.signed and self.model.mode == "absolute":      # an algebra result's differences
                self.legend.set_range(f"+{largest} {SCALE_NOTE}", low_text=f"-{largest}", signed=True)
            else:
                self.legend.set_range(f"{largest} {SCALE_NOTE}")
        elif self.model.compares():
            scale = format_value(self.model.diff_scale, self.model.unit)
            self.legend.set_range(f"+{scale} {SCALE_NOTE}", low_text=f"-{scale}", signed=True)
        elif not self.model.compares() and self.model.layout is not None:
            self.model.mode, mode = "absolute", self.model.mode       # the legend of the values on show
            self.update_legend()
            self.model.mode = mode
        else:
            super().update_legend()

    def node_selected(self, node: int) -> None:
        loc = self.model.location_of(node)
        if loc >= 0:
            self.state.select_location(loc)

    def _on_location_selected(self, loc: int) -> None:
        if self.model.layout is not None and 0 <= loc < self.model.layout.n_locations:
            node = self.model.layout.location_id(loc)
            if node != self.model.selected:
                self.select_node(node)
