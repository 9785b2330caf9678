"""One variant's page: the metric tree with bars, or why nothing can be shown."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

from popview.analysis.report import nodes
from popview.gui.advisor.bar import BarDelegate
from popview.gui.advisor.model import BAR, NAME, RATING, VALUE, MetricTreeModel


MAX_NAME_WIDTH = 380


class VariantTab(QWidget):
    def __init__(self, variant, parent=None):
        super().__init__(parent)
        self.variant = variant
        self.model = MetricTreeModel(self)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setItemDelegateForColumn(BAR, BarDelegate(self.tree))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectRows)
        header = self.tree.header()
        header.setSectionResizeMode(NAME, QHeaderView.Interactive)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(BAR, QHeaderView.Interactive)
        header.setSectionResizeMode(RATING, QHeaderView.ResizeToContents)   # a reason is never cut
        header.setStretchLastSection(False)
        header.resizeSection(BAR, 200)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.RichText)
        self.message.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.message)
        lay.addWidget(self.tree)
        QShortcut(QKeySequence.Copy, self.tree, self.copy, context=Qt.WidgetShortcut)

    def show_roots(self, roots: list) -> None:
        self.model.set_roots(roots)
        self.tree.expandAll()
        # long names (per-region rows) must not push the bars out of sight
        self.tree.header().resizeSection(NAME, min(self.tree.sizeHintForColumn(NAME) + 8, MAX_NAME_WIDTH))
        available = [n for r in roots for _, n in r.walk() if nodes.value(n) is not None]
        if roots and not available:
            reasons = sorted({nodes.reason(n) for r in roots for _, n in r.walk() if nodes.reason(n)})
            self.show_message("<b>Analysis is not possible:</b> " +
                              "; ".join(reasons or ["no metric of this model could be computed"]))
        else:
            self.message.hide()

    def as_text(self) -> str:
        """The tree as tab-separated text (Ctrl+C), with min / avg / max where known."""
        lines = [f"{self.variant.label}\tValue\tRating\tMin\tAvg\tMax"]
        for root in self.model.roots():
            for depth, n in root.walk():
                sp = nodes.spread(n)
                stats = [nodes.format_as(n, x) for x in sp] if sp else ["", "", ""]
                rating = nodes.rating_word(n) if nodes.value(n) is not None else f"n/a: {nodes.reason(n)}"
                lines.append("\t".join(["  " * depth + n.name, nodes.format_value(n), rating, *stats]))
        return "\n".join(lines) + "\n"

    def copy(self) -> None:
        QApplication.clipboard().setText(self.as_text())

    def show_message(self, html: str) -> None:
        self.message.setText(html)
        self.message.show()

    def show_busy(self) -> None:
        self.show_message("<i>calculating...</i>")
        self.tree.setEnabled(False)

    def show_done(self) -> None:
        self.tree.setEnabled(True)
