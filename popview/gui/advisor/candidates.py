"""The candidates list: call paths with low efficiencies, filtered by their
share of the run; clicking one selects it and makes it the focus."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDoubleSpinBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSlider,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from popview.analysis.report.scale import ACCEPTABLE


class CandidatesWidget(QWidget):
    """Shows a list of Candidate; emits `requested` (threshold) and `chosen` (Candidate)."""

    requested = Signal(float)
    chosen = Signal(object)
    expandedChanged = Signal(bool)       # the list unfolds when candidates are asked for

    def __init__(self, parent=None):
        super().__init__(parent)
        self._all: list = []
        self._found_below: float | None = None     # threshold of the last search
        self.threshold = QDoubleSpinBox(self)
        self.threshold.setRange(0.05, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setValue(ACCEPTABLE)
        self.threshold.setToolTip("A call path is a candidate when one of its efficiencies is below this")
        self.slider = QSlider(Qt.Horizontal, self)
        self.slider.setRange(0, 50)
        self.slider.setValue(5)
        self.slider.setToolTip("Hide call paths below this share of the run")
        self.slider_label = QLabel(self)
        self.find_button = QPushButton("Find candidates", self)
        self.status = QLabel(self)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Call path", "Share", "Low efficiencies"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectRows)
        self.table.setSelectionMode(QTableWidget.SingleSelection)
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.Stretch)
        h.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.Stretch)

        first = QHBoxLayout()
        first.addWidget(QLabel("Candidates: efficiencies below", self))
        first.addWidget(self.threshold)
        first.addStretch(1)
        first.addWidget(self.find_button)
        second = QHBoxLayout()
        second.addWidget(QLabel("Show call paths with at least", self))
        second.addWidget(self.slider, 1)
        second.addWidget(self.slider_label)
        second.addWidget(QLabel("of the run", self))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(first)
        self.details = QWidget(self)         # folded away until a search is asked for
        details = QVBoxLayout(self.details)
        details.setContentsMargins(0, 0, 0, 0)
        details.addLayout(second)
        details.addWidget(self.status)
        details.addWidget(self.table)
        lay.addWidget(self.details, 1)
        self.details.hide()

        self.slider.valueChanged.connect(self._refill)
        self.find_button.clicked.connect(self._find)
        self.table.cellClicked.connect(self._clicked)
        self._refill()

    @property
    def expanded(self) -> bool:
        return not self.details.isHidden()

    def set_expanded(self, on: bool) -> None:
        if on != self.expanded:
            self.details.setVisible(on)
            self.expandedChanged.emit(on)

    def _find(self) -> None:
        self.set_expanded(True)
        self.requested.emit(self.threshold.value())

    def min_share(self) -> float:
        return self.slider.value() / 100.0

    def set_candidates(self, candidates: list) -> None:
        self._all = list(candidates)
        self._found_below = self.threshold.value()
        self.set_expanded(True)
        self._refill()

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def clear(self) -> None:
        self._all = []
        self._found_below = None
        self.status.setText("")
        self.set_expanded(False)
        self._refill()

    def shown(self) -> list:
        return [c for c in self._all if c.share >= self.min_share()]

    def _refill(self) -> None:
        self.slider_label.setText(f"{self.slider.value()} %")
        rows = self.shown()
        if self._found_below is not None:
            self.status.setText(f"{len(self._all)} call path(s) below {self._found_below:.2f}, {len(rows)} of them "
                                f"with at least {self.slider.value()} % of the run" if self._all
                                else f"No call path below {self._found_below:.2f}.")
        self.table.setRowCount(len(rows))
        for r, c in enumerate(rows):
            for col, text in enumerate((c.path, f"{c.share * 100:.1f} %", c.summary())):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{c.path}\n" + "\n".join(f"{n}: {v * 100:.1f} %" for n, v in c.low))
                self.table.setItem(r, col, item)

    def _clicked(self, row: int, _col: int) -> None:
        rows = self.shown()
        if 0 <= row < len(rows):
            self.chosen.emit(rows[row])
