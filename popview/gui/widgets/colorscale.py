"""One sequential colour scale for every value in the trees and the topology,
and the legend that explains it. Negative values (differences) use blues."""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

# Light yellow -> orange -> dark red (ColorBrewer YlOrRd): readable on white.
POSITIVE_STOPS = [(0.0, "#ffffcc"), (0.25, "#fed976"), (0.5, "#fd8d3c"), (0.75, "#e31a1c"), (1.0, "#800026")]
NEGATIVE_STOPS = [(0.0, "#f7fbff"), (0.5, "#6baed6"), (1.0, "#08306b")]
NOT_AVAILABLE = QColor("#d0d0d0")
LUT_SIZE = 256


def _lut(stops) -> list[QColor]:
    pos = np.array([s for s, _c in stops])
    rgb = np.array([QColor(c).getRgb()[:3] for _s, c in stops], float)
    x = np.linspace(0, 1, LUT_SIZE)
    cols = np.stack([np.interp(x, pos, rgb[:, i]) for i in range(3)], axis=1).round().astype(int)
    return [QColor(int(r), int(g), int(b)) for r, g, b in cols]


_POS = _lut(POSITIVE_STOPS)
_NEG = _lut(NEGATIVE_STOPS)


def colour(fraction: float | None) -> QColor:
    """Colour of a value as a fraction of the scale (clipped to [-1, 1]); None = not available."""
    if fraction is None or not math.isfinite(fraction):
        return NOT_AVAILABLE
    lut = _POS if fraction >= 0 else _NEG
    return lut[min(int(abs(fraction) * (LUT_SIZE - 1) + 0.5), LUT_SIZE - 1)]


def colours(fractions: np.ndarray) -> np.ndarray:
    """RGB uint8 array (n, 3) for many fractions at once (the topology's cells)."""
    f = np.clip(np.nan_to_num(np.asarray(fractions, float), nan=0.0), -1, 1)
    pos = np.array([c.getRgb()[:3] for c in _POS], np.uint8)
    neg = np.array([c.getRgb()[:3] for c in _NEG], np.uint8)
    idx = np.minimum((np.abs(f) * (LUT_SIZE - 1) + 0.5).astype(int), LUT_SIZE - 1)
    out = np.where((f >= 0)[:, None], pos[idx], neg[idx])
    out[~np.isfinite(np.asarray(fractions, float))] = NOT_AVAILABLE.getRgb()[:3]
    return out


class ColorLegend(QWidget):
    """The gradient with its end labels: '0' to the value that maps to full colour."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.low_text, self.high_text, self.signed = "0", "", False
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("Colour scale of the values shown")

    def set_range(self, high_text: str, low_text: str = "0", signed: bool = False) -> None:
        self.low_text, self.high_text, self.signed = low_text, high_text, signed
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(200, self.fontMetrics().height() + 6)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        fm = self.fontMetrics()
        lo_w = fm.horizontalAdvance(self.low_text) + 8
        hi_w = fm.horizontalAdvance(self.high_text) + 8
        bar = QRectF(lo_w, 3, max(10, self.width() - lo_w - hi_w), self.height() - 6)
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        if self.signed:
            for s, c in NEGATIVE_STOPS:
                grad.setColorAt(0.5 - s / 2, QColor(c))
            for s, c in POSITIVE_STOPS:
                grad.setColorAt(0.5 + s / 2, QColor(c))
        else:
            for s, c in POSITIVE_STOPS:
                grad.setColorAt(s, QColor(c))
        p.fillRect(bar, grad)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawRect(bar)
        p.drawText(QRectF(0, 0, lo_w - 4, self.height()), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   self.low_text)
        p.drawText(QRectF(bar.right() + 4, 0, hi_w, self.height()), Qt.AlignmentFlag.AlignLeft
                   | Qt.AlignmentFlag.AlignVCenter, self.high_text)
