"""Numbers with units, as the trees and tooltips show them."""
from __future__ import annotations

import math

_TIME = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]
_BYTES = [(2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")]


def format_value(value: float | None, unit: str = "") -> str:
    """'1.23 ms', '4.5 MiB', '1,234 occ', '12.3 %'; 'n/a' for a missing value."""
    if value is None or not math.isfinite(value):
        return "n/a"
    u = unit.lower()
    if u in ("sec", "s", "seconds"):
        a = abs(value)
        if a == 0:
            return "0 s"
        if a >= 1000:
            return f"{value:,.0f} s"
        for scale, name in _TIME:
            if a >= scale or scale == 1e-9:
                return f"{value / scale:.4g} {name}"
    if u in ("bytes", "byte", "b"):
        for scale, name in _BYTES:
            if abs(value) >= scale:
                return f"{value / scale:.4g} {name}"
        return f"{value:,.0f} B"
    if u == "%":
        return f"{value:.4g} %"
    if float(value).is_integer() and abs(value) < 1e15:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".strip()
