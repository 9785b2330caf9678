"""What the three tree panes share: the view, the legend, copy and the
Cube expand semantics (the selected node's expansion decides whether the
panes to its right get its inclusive or its exclusive value)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QMenu, QTreeView, QVBoxLayout, QWidget

from popview.gui.trees.models import Forest, ValueTreeModel
from popview.gui.trees.source import profile_values, unavailable_reason
from popview.gui.widgets.colorscale import ColorLegend
from popview.gui.widgets.units import format_value


VALUE_FLOOR = "000.0 ms"
"""The value column is never narrower than this (a value of a usual width)."""

class TreePane(QWidget):
    """A QTreeView over a ValueTreeModel, with a legend and a status line."""

    def __init__(self, state, model: ValueTreeModel, parent=None):
        super().__init__(parent)
        self.state = state
        self.model = model
        self.pv = None
        self.view = QTreeView(self)
        self.view.setModel(model)
        self.view.setUniformRowHeights(True)
        # a cut name keeps its end: 'PAPI_TOT_INS (occ)' and 'PAPI_TOT_CYC (occ)' both read
        # 'PAPI_TOT_...' cut at the right in a narrow pane; '!$omp parallel @heat.c:107' its line
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)   # ResizeToContents visits every row
        # sized to the values on show (fit_value_column), so that a narrow pane gives its names the room
        header.resizeSection(1, self.fontMetrics().horizontalAdvance(VALUE_FLOOR) + 24)
        # a narrow pane scrolls rather than cut a short name ("Time (sec)") to "Tim..."
        header.setMinimumSectionSize(self.fontMetrics().horizontalAdvance("Time (sec)") + 48)
        self._fit_timer = QTimer(self, singleShot=True, interval=0, timeout=self.fit_value_column)
        for signal in (model.dataChanged, model.modelReset, model.layoutChanged):
            signal.connect(self._fit_soon)
        self.view.expanded.connect(lambda idx: self._on_expand(idx, True))
        self.view.expanded.connect(self._fit_soon)
        self.view.collapsed.connect(lambda idx: self._on_expand(idx, False))
        self.view.selectionModel().currentChanged.connect(self._on_current)
        self.copy_action = QAction("Copy value", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(self.copy_current)
        self.addAction(self.copy_action)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.legend = ColorLegend(self)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(2, 2, 2, 2)
        self.layout_.addWidget(self.view, 1)
        self.layout_.addWidget(self.legend)
        self.layout_.addWidget(self.status)
        state.currentExperimentChanged.connect(lambda _e: self.reload())
        state.valueModeChanged.connect(self._on_mode)
        state.referenceChanged.connect(lambda _e: self.refresh())
        state.annotationsChanged.connect(self.show_notes)
        model.set_mode(state.value_mode)

    def _fit_soon(self, *_signal_args) -> None:
        self._fit_timer.start()

    def fit_value_column(self) -> None:
        """Fit the value column to its widest text among the top rows and the rows on show (an
        11-digit counter is never cut), narrower too: at 1600x1000 the Metrics pane cut
        "Computation outside OpenMP" to "Computation o..." beside a column sized for
        "0,000,000,000 occ" that showed "846.1 ms". Runs on expanding and new values, not on
        scrolling, so the column does not jump while one scrolls."""
        model, header, metrics = self.model, self.view.header(), self.view.fontMetrics()
        texts = [model.index(r, 1).data() for r in range(min(model.rowCount(), 200))]
        index = self.view.indexAt(self.view.viewport().rect().topLeft())
        for _ in range(200):
            if not index.isValid():
                break
            texts.append(index.siblingAtColumn(1).data())
            index = self.view.indexBelow(index)
        need = max([metrics.horizontalAdvance(str(t)) for t in texts if t] + [metrics.horizontalAdvance(VALUE_FLOOR)])
        if need + 24 != header.sectionSize(1):
            header.resizeSection(1, need + 24)

    # ---- hooks ------------------------------------------------------------------
    def build(self) -> None:
        """Set the model's structure for self.pv (not None)."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Recompute the model's values from the state's selection."""
        raise NotImplementedError

    def node_selected(self, node: int) -> None:
        """The user selected `node` (its expansion is in self.model.expanded)."""

    def node_expanded(self, node: int, expanded: bool) -> None:
        """The selected node was expanded or collapsed."""

    def extra_menu(self, menu: QMenu, node: int) -> None:
        """Add pane-specific entries to a row's context menu."""

    def notes_by_node(self) -> dict[int, list[str]]:
        """Annotation texts per node of this tree (none by default)."""
        return {}

    def show_notes(self) -> None:
        if self.pv is not None:
            self.model.set_notes(self.notes_by_node())

    # ---- shared behaviour ------------------------------------------------------------
    def reload(self) -> None:
        exp = self.state.current
        self.pv = profile_values(exp)
        if self.pv is None:
            self.model.set_forest(Forest(np.zeros(0, np.int64)))
            self.model.set_values(np.zeros(0), np.zeros(0), "")
            self.status.setText(unavailable_reason(exp))
            return
        self.build()
        self.refresh()
        self.show_notes()

    def reference_experiment(self):
        """The run differences are taken to: the one the user chose, else (as the Advisor's
        scalabilities) the smallest run of the current run's series; None in other modes."""
        if self.state.value_mode != "difference":
            return None
        ref = self.state.reference
        if ref is None:
            from popview.gui.advisor.runs import series_runs
            runs = series_runs(self.state)
            ref = runs[0] if len(runs) > 1 else None
        return None if ref is None or ref is self.state.current else ref

    def reference_values(self):
        ref = self.reference_experiment()
        return profile_values(ref) if ref is not None else None

    def difference_note(self) -> str:
        """What the differences are taken to, for the status line."""
        ref = self.reference_experiment()
        if ref is None:
            return ""
        chosen = "" if self.state.reference is ref else ", the smallest run of the series"
        return f": difference to {ref.name}{chosen}"

    def _on_mode(self, mode: str) -> None:
        self.model.set_mode(mode)
        if mode == "difference":
            self.refresh()
        self.update_legend()

    def update_legend(self) -> None:
        unit = self.model.unit
        if self.model.mode == "percent_selection":
            self.legend.set_range("100 % of the selection")
        elif self.model.mode == "percent_root" and self.model.root_total():
            # in the unit of the values on show (it read '37.43 s' over a column of percentages)
            self.legend.set_range(f"{100 * self.model.scale / self.model.root_total():.3g} % of the total")
        elif self.model.compares():
            scale = format_value(self.model.diff_scale, unit)
            self.legend.set_range(f"+{scale}", low_text=f"-{scale}", signed=True)
        elif self.model.signed:                  # values of a difference: the scale both ways
            scale = format_value(self.model.scale, unit)
            self.legend.set_range(f"+{scale}", low_text=f"-{scale}", signed=True)
        else:
            self.legend.set_range(format_value(self.model.scale, unit))

    def _on_expand(self, index: QModelIndex, expanded: bool) -> None:
        node = self.model.node_of(index)
        self.model.set_expanded(node, expanded)
        if node == self.model.selected:
            self.node_expanded(node, expanded)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node = self.model.node_of(current)
        if node >= 0 and node != self.model.selected:
            self.model.set_selected(node)
            self.node_selected(node)

    def select_node(self, node: int) -> None:
        """Select (and scroll to) a node, expanding its ancestors."""
        for a in self.model.forest.ancestors(node):
            self.view.expand(self.model.index_of(a))
        idx = self.model.index_of(node)
        if idx.isValid():
            self.view.setCurrentIndex(idx)
            self.view.scrollTo(idx)

    def copy_current(self) -> None:
        node = self.model.node_of(self.view.currentIndex())
        if node >= 0:
            text = f"{self.model.name(node)}\t{format_value(self.model.shown(node), self.model.shown_unit(node))}"
            QGuiApplication.clipboard().setText(text)

    def _context_menu(self, pos) -> None:
        index = self.view.indexAt(pos)
        node = self.model.node_of(index)
        if node < 0:
            return
        self.view.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(self.copy_action)
        self.extra_menu(menu, node)
        menu.popup(self.view.viewport().mapToGlobal(pos))
