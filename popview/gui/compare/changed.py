"""The call paths that changed most between A and B (exclusive time, as
`popview diff` lists them); a click selects the call path on both sides."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from popview.analysis import algebra
from popview.gui.advisor.model import BETTER, WORSE
from popview.gui.jobs import Lane
from popview.gui.widgets.units import format_value

TOP = 15
COLUMNS = ["Call path", "A", "B", "A - B", "in"]


class ChangedMost(QWidget):
    callpathChosen = Signal(int, int)        # A's call path, B's call path (-1 where absent)

    def __init__(self, a, b, metric: str = "time", parent=None):
        super().__init__(parent)
        self.a, self.b, self.metric = a, b, metric
        self.rows: list[dict] = []
        self.result = None
        self.lane = Lane(self, "compare: changed call paths")
        self.title = QLabel(f"<b>Changed most</b>: {metric}, exclusive per call path", self)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideLeft)       # a call path's end says where it is
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(COLUMNS)):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._chosen)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.title)
        lay.addWidget(self.tree, 1)
        a_, b_, m = a, b, metric

        def job():
            pa, pb = a_.profile(), b_.profile()
            d = algebra.difference(pa, pb, collapse="run")          # per call path: any shapes
            return d, algebra.changed_most(d, pa, pb, m, TOP), pa.metric(m).unit if pa.has(m) else ""
        self.lane.submit(job, self._arrived)

    def _arrived(self, result, error) -> None:
        if error is not None:
            self.title.setText(f"<b>Changed most</b>: not available: {error.splitlines()[0]}")
            return
        self.result, self.rows, unit = result
        for r in self.rows:
            item = QTreeWidgetItem([r["callpath"], format_value(r["a"], unit), format_value(r["b"], unit),
                                    ("+" if r["a_minus_b"] > 0 else "") + format_value(r["a_minus_b"], unit),
                                    r["in"]])
            item.setToolTip(0, r["callpath"])
            for c in (1, 2, 3):
                item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setForeground(3, QBrush(WORSE if r["a_minus_b"] > 0 else BETTER))   # more time is worse
            self.tree.addTopLevelItem(item)
        if not self.rows:
            self.tree.addTopLevelItem(QTreeWidgetItem(["(no call path differs)"]))

    def _chosen(self, item, _previous) -> None:
        row = self.tree.indexOfTopLevelItem(item) if item is not None else -1
        if self.result is None or not 0 <= row < len(self.rows):
            return
        node = self.rows[row]["node"]
        self.callpathChosen.emit(algebra.in_run(self.result, 0, node), algebra.in_run(self.result, 1, node))
