"""Ordered dithering for a share of each pixel drawn as whole pixels (a worker's waits zoomed out)."""
from __future__ import annotations

import numpy as np

GOLDEN = 0.6180339887498949


def thresholds(t0: int, t1: int, width: int) -> np.ndarray:
    """Per pixel of [t0, t1): a threshold in [0, 1) from the pixel's index counted from time 0
    at this pixel width (the golden ratio's low-discrepancy sequence). The pixels whose share
    exceeds their threshold are a fraction of them equal to the share, spread evenly, and a
    pixel keeps its threshold when the view pans: error diffusion along a row, which carries
    its rounding from the view's first pixel, recoloured unchanged pixels at every pan."""
    first = np.floor(t0 * width / max(t1 - t0, 1) + 0.5)
    index = first + np.arange(width, dtype=np.float64)
    return np.modf(index * GOLDEN)[0] % 1.0


def drawn(share: np.ndarray, t0: int, t1: int) -> np.ndarray:
    """Rows x pixels: where a share (0..1 of each pixel) is drawn as the whole pixel."""
    return (share > thresholds(t0, t1, share.shape[-1])) & (share > 0)
