"""The experiments list: every open run with its format, shape, duration and
paradigms; runs of one series grouped under the series' name, and a trace and
the profile of the same run (Score-P writes both) as two views under the run."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QMenu, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from popview.gui.advisor.runs import run_key
from popview.gui.widgets.units import format_value

# shape and duration first: in the Overview's 300 px pane the duration of an OTF2 run was cut to
# "4.974" (its unit past the edge) behind the format column
COLUMNS = ["Experiment", "Procs x threads", "Duration", "Format", "Paradigms"]
EXP_ROLE = Qt.ItemDataRole.UserRole + 1


def describe(exp) -> list[str]:
    """The row of an experiment (from its info(), which reads definitions only)."""
    info = exp.info()
    duration = info.get("duration_ns") or 0
    return [exp.name, f"{info.get('processes', 0)} x {info.get('threads_per_process', 0)}",
            format_value(duration / 1e9, "sec") if duration else "n/a", info.get("format", ""),
            ", ".join(info.get("paradigms") or [])]


class ExperimentsPane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(True)
        # several runs are picked together to compare them (File > Compare runs); the current one is A
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemSelectionChanged.connect(self._on_picked)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.tree)
        state.experimentsChanged.connect(self.rebuild)
        state.currentExperimentChanged.connect(self._show_current)
        state.referenceChanged.connect(lambda _e: self.rebuild())
        self.rebuild()

    def rebuild(self) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        twins = _views_of_one_run(self.state.experiments)
        runs: dict[tuple, QTreeWidgetItem] = {}
        for exp in self.state.by_size():                 # runs of a series by size
            series = self.state.series.get(exp)
            parent = self.tree.invisibleRootItem()
            if series:
                if series not in groups:
                    groups[series] = QTreeWidgetItem([f"series {series}"])
                    self.tree.addTopLevelItem(groups[series])
                parent = groups[series]
            try:
                row = describe(exp)
            except Exception as exc:  # noqa: BLE001 - one bad run must not hide the others
                row = [exp.name, "", "", "", f"info unavailable: {exc}"]
            if id(exp) in twins:
                key = (series, twins[id(exp)])
                if key not in runs:
                    runs[key] = QTreeWidgetItem([exp.name, row[1], "", "", "trace + profile"])
                    runs[key].setToolTip(0, "one run: its trace and its profile are two views of it")
                    parent.addChild(runs[key])
                parent = runs[key]
                row[0] = "trace" if getattr(exp, "is_trace", True) else "profile"
            if exp is self.state.reference:
                row[0] += "  (reference)"
            item = QTreeWidgetItem(row)
            item.setData(0, EXP_ROLE, exp)
            item.setToolTip(0, str(getattr(exp, "source", exp.name)))
            parent.addChild(item)
        self.tree.expandAll()
        for exp in self.state.picked:                    # picked runs stay picked
            item = self.item_of(exp)
            if item is not None:
                item.setSelected(True)
        for c in range(len(COLUMNS)):
            self.tree.resizeColumnToContents(c)
        self.tree.blockSignals(False)
        self._show_current(self.state.current)

    def item_of(self, exp) -> QTreeWidgetItem | None:
        """The row of `exp` (at any depth)."""
        it = self.tree.invisibleRootItem()
        stack = [it.child(i) for i in range(it.childCount())]
        while stack:
            item = stack.pop()
            if item.data(0, EXP_ROLE) is exp:
                return item
            stack.extend(item.child(i) for i in range(item.childCount()))
        return None

    def _show_current(self, exp) -> None:
        item = self.item_of(exp) if exp is not None else None
        if item is not None and item is not self.tree.currentItem():
            self.tree.blockSignals(True)
            # the current run joins the picked ones when it is one of them; otherwise it alone is picked
            self.tree.setCurrentItem(item, 0, QItemSelectionModel.SelectionFlag.NoUpdate)
            if not item.isSelected():
                self.tree.clearSelection()
                item.setSelected(True)
            self.tree.blockSignals(False)
            self._on_picked()

    def _on_current(self, item, _previous) -> None:
        exp = item.data(0, EXP_ROLE) if item is not None else None
        if exp is not None:
            self.state.set_current(exp)

    def _on_picked(self) -> None:
        picked = [it.data(0, EXP_ROLE) for it in self.tree.selectedItems()]
        self.state.picked = [e for e in picked if e is not None]

    def pick(self, experiments) -> None:
        """Select these runs together (as ctrl-clicks do)."""
        self.tree.clearSelection()
        for exp in experiments:
            item = self.item_of(exp)
            if item is not None:
                item.setSelected(True)

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        exp = item.data(0, EXP_ROLE) if item is not None else None
        if exp is None:
            return
        menu = QMenu(self)
        menu.addAction("Show", lambda: self.state.set_current(exp))
        ref = menu.addAction("Use as reference for differences", lambda: self._use_as_reference(exp))
        ref.setEnabled(exp is not self.state.reference)
        menu.addSeparator()
        menu.addAction("Close", lambda: self.state.remove_experiment(exp))
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def _use_as_reference(self, exp) -> None:
        self.state.set_reference(exp)
        self.state.set_value_mode("difference")

    def menu_actions(self) -> dict:
        act = QAction("Use the current experiment as &reference", self)
        act.triggered.connect(lambda: self.state.current is not None and self.state.set_reference(self.state.current))
        return {"Analysis": [act]}


def _views_of_one_run(experiments) -> dict[int, tuple]:
    """id(exp) -> run key, for the experiments that are a trace and a profile of one run."""
    kinds: dict[tuple, set] = {}
    keys = {}
    for exp in experiments:
        try:
            keys[id(exp)] = run_key(exp)
        except Exception:  # noqa: BLE001 - a run without a known shape stands alone
            continue
        kinds.setdefault(keys[id(exp)], set()).add(bool(getattr(exp, "is_trace", True)))
    return {i: k for i, k in keys.items() if kinds[k] == {True, False}}

