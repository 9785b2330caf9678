"""The Advisor's bar: red-to-green fill, the 0.8 "acceptable" mark, the
100 % line when scalabilities run past it, and the min..max whisker. An
upper bound (MetricNode.bound) is hatched and ends in a dotted edge: the
true value lies somewhere left of it."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

from popview.analysis.report import nodes
from popview.analysis.report.scale import ACCEPTABLE, colour
from popview.gui.advisor.model import NodeRole, ScaleRole, SplitRole


def paint_bar(painter, rect: QRectF, value: float | None, scale: float,
              spread: tuple[float, float, float] | None = None, bound: str | None = None) -> None:
    """Draw one bar for `value` on [0, scale] into `rect`; hatched when `value` is an upper bound."""
    painter.save()
    painter.setRenderHint(painter.RenderHint.Antialiasing, False)

    def x(v):
        return rect.left() + min(max(v, 0.0), scale) / scale * rect.width()

    painter.fillRect(rect, QColor(236, 236, 236))
    if value is not None:
        fill = QRectF(rect.left(), rect.top(), x(value) - rect.left(), rect.height())
        painter.fillRect(fill, QColor(*colour(value)))
        if bound:
            painter.fillRect(fill, QBrush(QColor(255, 255, 255, 190), Qt.BDiagPattern))
            painter.setPen(QPen(QColor(40, 40, 40), 2, Qt.DotLine))
            painter.drawLine(int(fill.right()), int(rect.top()), int(fill.right()), int(rect.bottom()))
    if spread is not None:
        lo, _, hi = spread
        mid = rect.center().y()
        painter.setPen(QPen(QColor(40, 40, 40), 1))
        painter.drawLine(int(x(lo)), int(mid), int(x(hi)), int(mid))
        for v in (lo, hi):
            painter.drawLine(int(x(v)), int(mid - 3), int(x(v)), int(mid + 3))
    mark = QPen(QColor(60, 60, 60), 1, Qt.DashLine)
    painter.setPen(mark)
    painter.drawLine(int(x(ACCEPTABLE)), int(rect.top()), int(x(ACCEPTABLE)), int(rect.bottom()))
    if scale > 1.0:
        painter.setPen(QPen(QColor(0, 0, 0), 1))
        painter.drawLine(int(x(1.0)), int(rect.top()), int(x(1.0)), int(rect.bottom()))
    painter.setPen(QPen(QColor(160, 160, 160), 1))
    painter.drawRect(rect)
    painter.restore()


class BarDelegate(QStyledItemDelegate):
    """Paints the bar column of a MetricTreeModel."""

    def paint(self, painter, option, index):
        node = index.data(NodeRole)
        if node is None or not nodes.is_rated(node) or index.data(SplitRole):   # a split: its parent's bar
            super().paint(painter, option, index)
            return
        if option.state & QStyle.State_Selected:
            painter.fillRect(option.rect, option.palette.highlight())
        r = QRectF(option.rect).adjusted(4, 4, -4, -4)
        paint_bar(painter, r, nodes.value(node), float(index.data(ScaleRole) or 1.0), nodes.spread(node),
                  nodes.bound(node))

    def sizeHint(self, option, index):
        return QSize(180, max(18, option.fontMetrics.height() + 6))
