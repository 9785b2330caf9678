"""One variant's page: the metric tree with bars, or why nothing can be shown."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

from popview.analysis.node import ALTERNATIVES
from popview.analysis.report import nodes
from popview.gui.advisor.bar import BarDelegate
from popview.gui.advisor.model import BAR, NAME, RATING, VALUE, MetricTreeModel, NodeRole
from popview.gui.widgets.apart import ApartDelegate
from popview.gui.widgets.units import MICRO


MAX_NAME_WIDTH = 380
NAME_SHARE = 0.45
"""The name column may take this share of a wide pane (per-region rows are long call paths)."""
BAR_WIDTH, NARROW_BAR_WIDTH = 200, 110
NARROW = 760
"""Below this width (px) the bars are shorter: the rating and its reason stay in sight."""
KEY_DEPTH = 1
"""A tree too tall for its room opens at least to this depth (the key rows: global and
parallel efficiency, the parts of the latter, computation scalability), deeper levels
as far as they fit; a row whose children are all not available stays closed."""


class VariantTab(QWidget):
    def __init__(self, variant, parent=None):
        super().__init__(parent)
        self.variant = variant
        self.model = MetricTreeModel(self)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setItemDelegateForColumn(BAR, BarDelegate(self.tree))
        self.tree.setItemDelegateForColumn(NAME, ApartDelegate(self.tree))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        # a long per-region row keeps both ends: cut at the right, the scout profile of BT-MZ
        # showed two rows 'Region bt-mz_C.8/bt/exch_qbc/copy_x_face...'
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectRows)
        header = self.tree.header()
        header.setSectionResizeMode(NAME, QHeaderView.Interactive)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(BAR, QHeaderView.Interactive)
        header.setSectionResizeMode(RATING, QHeaderView.ResizeToContents)   # a reason is never cut
        header.setStretchLastSection(False)
        header.resizeSection(BAR, BAR_WIDTH)
        self._fitted_to = None           # (rows of room, width, compact) the tree was last opened for
        self.compact = False             # a low strip: open the tree as far as it fits
        self.tree.expanded.connect(self._size_names)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.RichText)
        self.message.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.message)
        lay.addWidget(self.tree)
        QShortcut(QKeySequence.Copy, self.tree, self.copy, context=Qt.WidgetShortcut)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _room(self) -> int:
        """How many rows the tree's viewport holds."""
        first = self.model.index(0, 0)
        row = self.tree.rowHeight(first) if first.isValid() else 0
        return self.tree.viewport().height() // max(row or self.tree.fontMetrics().height() + 6, 1)

    def set_compact(self, compact: bool) -> None:
        """In a low strip the tree opens as far as it fits; elsewhere all of it (it scrolls)."""
        if compact != self.compact:
            self.compact = compact
            self._fit()

    def _fit(self, force: bool = False) -> None:
        """Open the tree (compact: as far as its room allows), bars shortened in a narrow
        pane. Only when the room changed: rows the user opened stay open."""
        room = (self._room(), self.width() < NARROW, self.compact, self.width() // 50)
        if room == self._fitted_to and not force:
            return
        self._fitted_to = room
        self.tree.header().resizeSection(BAR, NARROW_BAR_WIDTH if room[1] else BAR_WIDTH)
        roots = self.model.roots()
        walked = [(d, n) for r in roots for d, n in r.walk()]
        if not walked:
            return
        deepest = max(d for d, _ in walked)
        if not self.compact or len(walked) <= room[0]:
            self.tree.expandAll()
            self._size_names()
            return
        depth = KEY_DEPTH
        while depth < deepest and sum(rows_open_to(r, depth + 2) for r in roots) <= room[0]:
            depth += 1
        self.tree.collapseAll()
        self.tree.expandToDepth(depth)
        self._open_splits(self.tree.rootIndex())
        self._close_unavailable(self.tree.rootIndex())
        self._size_names()

    def _size_names(self, *_signal_args) -> None:
        """The name column as wide as the names on show; long ones (per-region rows) must
        not push the bars out of sight."""
        cap = max(MAX_NAME_WIDTH, int(self.width() * NAME_SHARE))
        self.tree.header().resizeSection(NAME, min(self.tree.sizeHintForColumn(NAME) + 8, cap))

    def _open_splits(self, parent) -> None:
        """Open the alternative splits of an open row ('By paradigm: MPI x OpenMP', 'By cause: load
        balance x communication'): folded, they only repeat their parent's value and hide its factors."""
        for row in range(self.model.rowCount(parent)):
            index = self.model.index(row, 0, parent)
            if not self.tree.isExpanded(index):
                continue
            if index.data(NodeRole).combine == ALTERNATIVES:
                for r in range(self.model.rowCount(index)):
                    self.tree.expand(self.model.index(r, 0, index))
            self._open_splits(index)

    def _close_unavailable(self, parent) -> None:
        """Close open rows below which nothing is available (one row says why); a row not
        available over available ones (a profile's parallel efficiency over its process level)
        stays open."""
        for row in range(self.model.rowCount(parent)):
            index = self.model.index(row, 0, parent)
            children = [self.model.index(r, 0, index) for r in range(self.model.rowCount(index))]
            if not children or not self.tree.isExpanded(index):
                continue
            if all(nodes.value(n) is None for c in children for _, n in c.data(NodeRole).walk()):
                self.tree.collapse(index)
            else:
                self._close_unavailable(index)

    def show_roots(self, roots: list) -> None:
        """The figures, opened as far as the tree's room allows (_fit): once, not opened whole first
        and folded again (on the 143 MB e10 trace: 40 ms of the GUI thread's for nothing)."""
        self.model.set_roots(roots)
        self._fit(force=True)
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
                stats = [nodes.format_as(n, x, micro=MICRO) for x in sp] if sp else ["", "", ""]
                rating = nodes.rating_word(n) if nodes.value(n) is not None else f"n/a: {nodes.reason(n)}"
                lines.append("\t".join(["  " * depth + n.name, nodes.format_value(n, micro=MICRO), rating, *stats]))
        return "\n".join(lines) + "\n"

    def copy(self) -> None:
        QApplication.clipboard().setText(self.as_text())

    def show_message(self, html: str) -> None:
        self.message.setText(html)
        self.message.show()

    def show_busy(self) -> None:
        """Waiting for the figures; on the first run on a machine, what the compiles are doing."""
        from popview.gui.widgets import compiling

        if not getattr(self, "_busy", False):
            compiling.progress().changed.connect(self._compiles_changed)
        self._busy = True
        self.show_message(f"<i>{html.escape(compiling.waiting_text('calculating'))}</i>")
        self.tree.setEnabled(False)

    def _compiles_changed(self) -> None:
        if getattr(self, "_busy", False) and not self.message.isHidden():
            self.show_busy()

    def show_done(self) -> None:
        if getattr(self, "_busy", False):
            from popview.gui.widgets import compiling

            compiling.progress().changed.disconnect(self._compiles_changed)
        self._busy = False
        self.tree.setEnabled(True)


def rows_open_to(node, depth: int) -> int:
    """Rows the tree shows of `node` opened to `depth` (children all not available stay closed)."""
    children = node.children
    if depth <= 0 or not children or all(nodes.value(c) is None for c in children):
        return 1
    return 1 + sum(rows_open_to(c, depth - 1) for c in children)
