"""A metric's values over locations, summarised for the box-plot and sorted-bar
views (Cube's system-dimension plugins): quartiles, Tukey whiskers (the most
extreme values within 1.5 interquartile ranges of the box, widened by 0.1 % of
the values' scale so that microseconds in seconds are no outliers), outliers, mean,
and the locations in order of their value. Locations without a value (NaN)
are left out and counted."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WHISKER = 1.5
RELATIVE_SPREAD = 1e-3       # differences below this fraction of the values' scale are not outliers


@dataclass
class Summary:
    n: int                       # locations with a value
    missing: int                 # locations without one
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float
    mean: float
    low: float                   # whisker ends
    high: float
    outliers: np.ndarray         # location indices beyond the whiskers

    @property
    def imbalance(self) -> float | None:
        """max / mean: 1 for a perfectly balanced metric (None without a positive mean)."""
        return self.maximum / self.mean if self.mean > 0 else None


def summarise(values: np.ndarray) -> Summary | None:
    """The box plot of `values` (one per location); None when no location has one."""
    v = np.asarray(values, float)
    ok = np.isfinite(v)
    if not ok.any():
        return None
    x = v[ok]
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    iqr = q3 - q1
    # judged against the values' scale too: with every rank at 3.28 s, the one 12 us longer is no outlier
    # (Tukey's fences alone collapse onto the box when the quartiles agree to the microsecond)
    slack = RELATIVE_SPREAD * float(np.abs(x).max())
    inside = x[(x >= q1 - WHISKER * iqr - slack) & (x <= q3 + WHISKER * iqr + slack)]
    low, high = float(inside.min()), float(inside.max())
    idx = np.flatnonzero(ok)
    out = idx[(v[idx] < low) | (v[idx] > high)]
    return Summary(n=int(ok.sum()), missing=int((~ok).sum()), minimum=float(x.min()), q1=float(q1),
                   median=float(med), q3=float(q3), maximum=float(x.max()), mean=float(x.mean()),
                   low=low, high=high, outliers=out)


def sorted_locations(values: np.ndarray, descending: bool = True) -> np.ndarray:
    """Location indices with a value, largest first (stable: equal values keep location order)."""
    v = np.asarray(values, float)
    idx = np.flatnonzero(np.isfinite(v))
    key = -v[idx] if descending else v[idx]
    return idx[np.argsort(key, kind="stable")]
