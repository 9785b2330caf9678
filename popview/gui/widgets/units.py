"""Numbers with units, as the trees and tooltips show them."""
from __future__ import annotations

import math

MICRO = "µs"
"""How the window writes microseconds, in every text that shows a time (the trees, the timeline,
the Advisor and its warnings through popview.analysis.report.nodes' micro=); the command line's
ASCII text writes "us"."""
_TIME = [(1.0, "s"), (1e-3, "ms"), (1e-6, MICRO), (1e-9, "ns")]
_BYTES = [(2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")]


def is_time(unit: str) -> bool:
    """A unit of seconds (Cube's "sec"): its values are shown in s, ms, µs or ns, so a name or
    an axis beside them does not say "(sec)"."""
    return unit.lower() in ("sec", "s", "seconds")


def format_value(value: float | None, unit: str = "") -> str:
    """'1.23 ms', '4.5 MiB', '1,234 occ', '12.3 %'; 'n/a' for a missing value."""
    if value is None or not math.isfinite(value):
        return "n/a"
    u = unit.lower()
    if is_time(u):
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


def format_span(t0_ns: float, t1_ns: float) -> str:
    """A time range in one unit, as precise as its width needs: '2.561 ms - 3.152 ms' (was
    '0.0025613 s - 0.00315163 s'), '1 s - 1.5 s', '12.3401 s - 12.3405 s'."""
    a, b = t0_ns / 1e9, t1_ns / 1e9
    top = max(abs(a), abs(b))
    scale, name = next(((s, n) for s, n in _TIME if top >= s), _TIME[-1])
    width = abs(b - a) / scale
    decimals = 3 if width <= 0 else max(0, min(9, 2 - math.floor(math.log10(width))))

    def one(v: float) -> str:
        text = f"{v / scale:.{decimals}f}"
        return (text.rstrip("0").rstrip(".") if "." in text else text) or "0"
    return f"{one(a)} {name} - {one(b)} {name}"


def focus_text(focus) -> str:
    """A focus as the window names it: a time window in readable units (format_span)."""
    if getattr(focus, "kind", None) == "window" and focus.t0 is not None and focus.t1 is not None:
        return format_span(focus.t0, focus.t1)
    return focus.label()
