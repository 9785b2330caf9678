"""A Qt item model over one metric-model result tree (a real tree, not
indented strings): columns metric, value, bar, rating."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from popview.analysis.node import ALTERNATIVES
from popview.analysis.report import nodes
from popview.gui.widgets.units import MICRO

COLUMNS = ("Metric", "Value", "", "Rating")
NAME, VALUE, BAR, RATING = range(4)
NodeRole = Qt.UserRole + 1       # the engine's node
ScaleRole = Qt.UserRole + 2      # upper end of the bar scale shared by the tree
SplitRole = Qt.UserRole + 3      # one of the parent's alternative splits (its value is the parent's)

GREY = QColor(140, 140, 140)
BETTER, WORSE = QColor(0, 120, 40), QColor(190, 30, 30)


class _Item:
    __slots__ = ("node", "parent", "row", "children")

    def __init__(self, node, parent, row):
        self.node, self.parent, self.row = node, parent, row
        self.children = [_Item(c, self, i) for i, c in enumerate(node.children)]

    @property
    def is_split(self) -> bool:
        """One of its parent's alternative splits ('By paradigm: MPI x OpenMP'): its value is the
        parent's, so it is shown as '= 17.9 %', greyed, without a bar or a rating of its own."""
        return self.parent is not None and self.parent.node.combine == ALTERNATIVES


class MetricTreeModel(QAbstractItemModel):
    """Rows are metric nodes; several roots (e.g. computation and I/O) are allowed."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._roots: list[_Item] = []
        self.bar_scale = 1.0

    def set_roots(self, roots: list) -> None:
        self.beginResetModel()
        self._roots = [_Item(r, None, i) for i, r in enumerate(roots)]
        values = [nodes.value(n) for r in roots for _, n in r.walk() if nodes.is_rated(n)]
        self.bar_scale = max([1.0] + [v for v in values if v is not None])
        self.endResetModel()

    def roots(self) -> list:
        return [i.node for i in self._roots]

    # ---- structure ----------------------------------------------------
    def _item(self, index: QModelIndex) -> _Item | None:
        return index.internalPointer() if index.isValid() else None

    def index(self, row, column, parent=QModelIndex()):
        item = self._item(parent)
        children = self._roots if item is None else item.children
        if 0 <= row < len(children) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, children[row])
        return QModelIndex()

    def parent(self, index=QModelIndex()):
        item = self._item(index)
        if item is None or item.parent is None:
            return QModelIndex()
        return self.createIndex(item.parent.row, 0, item.parent)

    def rowCount(self, parent=QModelIndex()):
        if parent.isValid() and parent.column() != 0:
            return 0
        item = self._item(parent)
        return len(self._roots if item is None else item.children)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index):
        return Qt.ItemIsEnabled | Qt.ItemIsSelectable if index.isValid() else Qt.NoItemFlags

    # ---- data ---------------------------------------------------------
    def data(self, index, role=Qt.DisplayRole):
        item = self._item(index)
        if item is None:
            return None
        node, col = item.node, index.column()
        available = nodes.value(node) is not None
        if role == Qt.DisplayRole:
            if item.is_split and col in (VALUE, RATING):
                return ("= " + nodes.format_value(node, micro=MICRO) if col == VALUE else "") if available else \
                    self._display(node, col, available)
            return self._display(node, col, available)
        if role == Qt.ToolTipRole:
            return tooltip_html(node)
        if role == Qt.ForegroundRole and (not available or item.is_split and col == VALUE):
            return QBrush(GREY)
        if role == Qt.ForegroundRole and col == VALUE and node.kind == "difference" and node.unit == "pp":
            v = nodes.value(node)           # a gain in efficiency is good news, a loss bad
            return QBrush(BETTER if v > 0.0005 else WORSE if v < -0.0005 else GREY)
        if role == Qt.FontRole and not available and col == NAME:
            f = QFont()
            f.setItalic(True)
            return f
        if role == Qt.TextAlignmentRole and col == VALUE:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == SplitRole:
            return item.is_split
        if role == NodeRole:
            return node
        if role == ScaleRole:
            return self.bar_scale
        return None

    @staticmethod
    def _display(node, col, available):
        if col == NAME:
            return node.name
        if col == VALUE:
            return nodes.format_value(node, micro=MICRO)
        if col == RATING:
            return nodes.rating_word(node) if available else f"n/a: {nodes.reason(node)}"
        return None


def tooltip_html(node) -> str:
    """The (?) help of a row: definition, formula, inputs, spread, reason."""
    parts = [f"<b>{escape(node.name)}</b>: {escape(nodes.format_value(node, micro=MICRO))}"]
    for head, text in nodes.help_lines(node, micro=MICRO):
        parts.append(f"<b>{escape(head)}:</b> {escape(text)}" if head else escape(text))
    return "<p style='white-space:pre-wrap'>" + "<br>".join(parts) + "</p>"
