"""Names cut to fit a column yet told apart from their siblings.

Cut at the right, 'MPI P2P send synchronizations' and 'MPI P2P recv synchronizations'
both read 'MPI P2P…'; cut in the middle, 'Pthread Mutex Lock Contention' and 'Pthread
Condition Lock Contention' both read 'Pthread…tention'. A name is cut at the right, else
in the middle, whichever keeps it different from the same cut of each sibling; else the
part that tells it apart is kept, with as much around it as fits."""
from __future__ import annotations

from os.path import commonprefix

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

ELLIPSIS = "\u2026"
MODES = (Qt.TextElideMode.ElideRight, Qt.TextElideMode.ElideMiddle)


def cut_apart(text: str, siblings: list[str], room: int, metrics) -> str:
    """`text` fitted to `room` px, different from its siblings' cuts where it can be."""
    if metrics.horizontalAdvance(text) <= room:
        return text
    others = [s for s in siblings if s != text]
    for mode in MODES:
        cut = metrics.elidedText(text, mode, max(room, 0))
        if all(metrics.elidedText(s, mode, max(room, 0)) != cut for s in others):
            return cut
    return _around_difference(text, others, room, metrics)


def _around_difference(text: str, others: list[str], room: int, metrics) -> str:
    """The part of `text` no sibling shares at that place, widened while it fits."""
    start = max((len(commonprefix([text, s])) for s in others), default=0)
    end = len(text) - max((len(commonprefix([text[::-1], s[::-1]])) for s in others), default=0)
    start, end = min(start, len(text) - 1), max(end, start + 1)

    def shown(a: int, b: int) -> str:
        return (ELLIPSIS if a > 0 else "") + text[a:b] + (ELLIPSIS if b < len(text) else "")

    a, b = start, end
    while metrics.horizontalAdvance(shown(a, b)) > room and b - a > 1:
        b -= 1                                   # even the difference is too long: its start
    grown = True
    while grown:
        grown = False
        if a > 0 and metrics.horizontalAdvance(shown(a - 1, b)) <= room:
            a, grown = a - 1, True
        if b < len(text) and metrics.horizontalAdvance(shown(a, b + 1)) <= room:
            b, grown = b + 1, True
    return shown(a, b)


class ApartDelegate(QStyledItemDelegate):
    """Column 0 of a tree: names cut with cut_apart against the rows beside them.
    `simplify(text)` may shorten a name before any cut (a metric's unit: the values show it)."""

    def __init__(self, parent=None, simplify=None):
        super().__init__(parent)
        self.simplify = simplify
        self._measuring = False

    def sizeHint(self, option, index):  # noqa: N802 - Qt override
        """The whole name's size: what a column sized to its contents must hold."""
        self._measuring = True
        try:
            return super().sizeHint(option, index)
        finally:
            self._measuring = False

    def initStyleOption(self, option, index) -> None:  # noqa: N802 - Qt override
        super().initStyleOption(option, index)
        if self._measuring or index.column() != 0 or not option.text or option.rect.width() <= 0:
            return
        room = self.text_room(option)
        if option.fontMetrics.horizontalAdvance(option.text) <= room:
            return
        model, parent = index.model(), index.parent()
        siblings = [str(model.index(r, 0, parent).data() or "") for r in range(model.rowCount(parent))]
        text = option.text
        if self.simplify is not None:
            text, siblings = self.simplify(text), [self.simplify(s) for s in siblings]
        option.text = cut_apart(text, siblings, room, option.fontMetrics)

    @staticmethod
    def text_room(option) -> int:
        """The width the style gives the text of this cell."""
        style = option.widget.style() if option.widget is not None else None
        if style is None:
            return option.rect.width()
        # the style draws the text inside its rectangle less a margin each side (Qt's
        # viewItemDrawText): room counted without it was cut a second time, in the middle
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, option.widget) + 1
        return style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, option.widget).width() \
            - 2 * margin - 1
