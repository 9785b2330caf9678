"""The log pane: what popview did and what went wrong, with details.

It shows the records of the "popview" logger; records from worker threads
arrive through a queued signal, so the pane is only touched by the GUI thread."""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QTextCharFormat, QColor
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

LEVEL_COLOURS = {logging.ERROR: "#b2182b", logging.WARNING: "#b35806"}


class _Bridge(QObject):
    record = Signal(int, str)


class _QtHandler(logging.Handler):
    def __init__(self, bridge: _Bridge):
        super().__init__(logging.INFO)
        self.bridge = bridge

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
            self.bridge.record.emit(record.levelno, f"{stamp} {record.levelname.lower()}: {record.getMessage()}")
        except RuntimeError:          # the pane is gone; nothing to show it in
            pass


class LogPane(QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(5000)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.text)
        self._bridge = _Bridge(self)
        self._bridge.record.connect(self.append)
        self._handler = _QtHandler(self._bridge)
        self.logger = logging.getLogger("popview")
        if self.logger.level == logging.NOTSET or self.logger.level > logging.INFO:
            self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self._handler)
        self.destroyed.connect(lambda _o=None, h=self._handler, lg=self.logger: lg.removeHandler(h))

    @Slot(int, str)        # a declared slot: records come from other threads (PYSIDE-3124)
    def append(self, level: int, message: str) -> None:
        fmt = QTextCharFormat()
        if level in LEVEL_COLOURS:
            fmt.setForeground(QColor(LEVEL_COLOURS[level]))
        cursor = self.text.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        if not self.text.document().isEmpty():
            cursor.insertBlock()
        cursor.insertText(message, fmt)
        self.text.ensureCursorVisible()

    def contents(self) -> str:
        return self.text.toPlainText()
