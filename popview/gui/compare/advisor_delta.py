"""The Advisor of two runs: one tree of the chosen variant with a column per run
and a delta column A - B (percentage points for efficiencies, coloured: green a
gain, red a loss). Computed on a background lane."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from popview.analysis.focus import Focus
from popview.analysis.report import compute, nodes, variants
from popview.analysis.tree_delta import difference_tree, find_like
from popview.gui.advisor.model import BETTER, GREY, WORSE, tooltip_html
from popview.gui.jobs import Lane
from popview.gui.widgets.units import MICRO

COLUMNS = ["Metric", "A", "B", "A - B"]


class AdvisorDelta(QWidget):
    def __init__(self, a, b, parent=None):
        super().__init__(parent)
        self.a, self.b = a, b
        self.lane = Lane(self, "compare Advisor")
        self.trees = None                      # [(tree A, tree B, A - B)] of the variant on show
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.variant_box = QComboBox(self)
        common = [v for v in variants.applicable(a) if v.key in {w.key for w in variants.applicable(b)}]
        for v in common:
            self.variant_box.addItem(v.label, v)
        best, _ = variants.preferred(a)
        if best in common:
            self.variant_box.setCurrentIndex(common.index(best))
        self.variant_box.currentIndexChanged.connect(lambda _i: self.compute())
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)      # long region paths keep both ends
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        top = QHBoxLayout()
        top.addWidget(QLabel("<b>Advisor</b>: A against B", self))
        top.addWidget(self.variant_box)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addLayout(top)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.status)
        self.compute()

    def compute(self, focus: Focus | None = None) -> None:
        v = self.variant_box.currentData()
        if v is None:
            self.status.setText("No metric model fits both runs.")
            return
        focus = focus or Focus.whole()
        a, b = self.a, self.b
        self.status.setText(f"Computing {v.label}...")

        def job():
            ta = compute.variant(a, v, focus, reference=b)       # A's scalabilities against B
            tb = compute.variant(b, v, focus)
            return [(x, y, difference_tree(x, y)) for x, y in zip(ta, tb)]
        self.lane.submit(job, self._arrived)

    def _arrived(self, result, error) -> None:
        if error is not None:
            self.status.setText(f"Could not compute: {escape(error.splitlines()[0])}")
            return
        self.trees = result
        self.tree.clear()
        for ta, tb, td in result:
            for root in ta.roots:
                self.tree.addTopLevelItem(self._item(root, tb, td))
        self.tree.expandAll()
        notes = sorted({n for _, _, td in result for n in td.notes})
        self.status.setText(" ".join(n.rstrip(".") + "." for n in notes) + " A's scalabilities are against B.")

    def _item(self, na, tb, td) -> QTreeWidgetItem:
        nb, nd = find_like(tb, na.id), td.find(na.id)
        item = QTreeWidgetItem([na.name, nodes.format_value(na, micro=MICRO),
                                nodes.format_value(nb, micro=MICRO) if nb else "n/a",
                                nodes.format_value(nd, micro=MICRO) if nd else "n/a"])
        for c in (1, 2, 3):
            item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        item.setToolTip(0, tooltip_html(na))
        if nd is not None:
            item.setToolTip(3, tooltip_html(nd))
            v = nodes.value(nd)
            if v is not None and nd.unit == "pp":
                item.setForeground(3, QBrush(BETTER if v > 0.0005 else WORSE if v < -0.0005 else GREY))
        item.setData(0, Qt.ItemDataRole.UserRole, na.id)
        for child in na.children:
            item.addChild(self._item(child, tb, td))
        return item

    def row(self, node_id: str) -> list[str] | None:
        """The texts of a metric's row (tests, screenshots)."""
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            it = stack.pop()
            if it.data(0, Qt.ItemDataRole.UserRole) == node_id:
                return [it.text(c) for c in range(len(COLUMNS))]
            stack.extend(it.child(i) for i in range(it.childCount()))
        return None
