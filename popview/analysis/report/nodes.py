"""Reading a MetricNode (popview.analysis.node) for display: the words and
numbers the Advisor, the scaling table and the report show, in one place."""
from __future__ import annotations

from popview.analysis.node import RATED as RATED_KINDS
from popview.analysis.report.scale import ROUNDING_NOISE, is_number, percent, rating


def value(node) -> float | None:
    """The node's value, None when not available (or not finite)."""
    return float(node.value) if is_number(node.value) else None


def is_rated(node) -> bool:
    """Efficiencies and scalabilities are judged on the 0..1 scale; plain values are not."""
    return node.kind in RATED_KINDS


def reason(node) -> str:
    return node.reason or ""


BOUND_SIGN = {"upper": "\u2264 "}
"""How a bound's value is written: "\u2264 33.6 %" (the true value is at most that)."""


def bound(node) -> str | None:
    """"upper" when the node's value is only an upper bound of the metric (MetricNode.bound)."""
    return getattr(node, "bound", None) if value(node) is not None else None


def unit(node) -> str:
    return node.unit or ""


def format_number(v: float, unit_text: str = "", *, micro: str = "us") -> str:
    if unit_text == "s":
        return format_seconds(v, micro=micro)
    text = f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return f"{text} {unit_text}".strip()


def format_seconds(v: float, *, micro: str = "us") -> str:
    """Readable at every scale: 13,970 s (3.9 h), 12.5 s, 3.2 ms; never 1.397e+04 s. `micro`:
    how microseconds are written: "us" in the command line's ASCII text, "µs" in the window
    (popview.gui.widgets.units.MICRO), as its trees, timeline and histograms write them."""
    if abs(v) >= 1e4:
        return f"{v:,.0f} s ({v / 3600:.1f} h)"
    for name, scale in (("s", 1.0), ("ms", 1e-3), (micro, 1e-6)):
        if abs(v) >= scale:
            return f"{v / scale:.4g} {name}"
    return f"{v * 1e9:.4g} ns" if v else "0 s"


def is_share(node) -> bool:
    """A fraction of the time (I/O shares): shown as a percentage, but not rated."""
    return unit(node) in ("%", "share") or node.id.endswith("_share")


def format_value(node, *, micro: str = "us") -> str:
    return BOUND_SIGN.get(bound(node), "") + format_as(node, value(node), micro=micro)


def format_as(node, v: float | None, *, micro: str = "us") -> str:
    """`v` written the way `node`'s values are (percent, seconds, GHz...)."""
    if v is None:
        return "n/a"
    if node.kind == "difference":
        return signed(v, unit(node), micro=micro)
    if node.id == "speedup":
        return f"{v:.2f}"
    return percent(v) if is_rated(node) or is_share(node) else format_number(v, unit(node), micro=micro)


def signed(v: float, unit_text: str, *, micro: str = "us") -> str:
    """A difference (popview.analysis.tree_delta): percentage points for efficiencies, else in its unit."""
    if unit_text == "pp":
        return "0.0 pp" if round(v * 100, 1) == 0 else f"{v * 100:+.1f} pp"
    if unit_text == "s":
        return ("+" if v >= 0 else "-") + format_seconds(abs(v), micro=micro)
    return f"{v:+.4g} {unit_text}".strip()


def rating_word(node) -> str:
    v = value(node)
    if v is None:
        return "not available"
    if not is_rated(node):
        return "upper bound" if bound(node) else ""
    if node.kind == "efficiency" and v > 1.0 + ROUNDING_NOISE:
        return "Inconsistent (> 100 %)"
    if bound(node):       # the true value is at most this: its word is at most this one
        return f"at most {rating(v)} (upper bound)"
    return rating(v)


def format_input(name: str, v, *, micro: str = "us") -> str:
    """An input line; the engine names times with an `_s` suffix."""
    if not is_number(v):
        return f"{name} = {v}"
    return f"{name} = {format_seconds(v, micro=micro) if name.endswith('_s') else f'{v:.6g}'}"


def spread(node) -> tuple[float, float, float] | None:
    """(min, avg, max) over locations, when the engine gives them."""
    stats = (node.min, node.avg, node.max)
    return tuple(float(s) for s in stats) if all(is_number(s) for s in stats) else None


def help_lines(node, *, micro: str = "us") -> list[tuple[str, str]]:
    """(heading, text) pairs: the definition, formula, inputs, spread, reason, warnings."""
    out = []
    if node.description:
        out.append(("", node.description))
    if node.formula:
        out.append(("Formula", node.formula))
    if node.inputs:
        out.append(("Inputs", "; ".join(format_input(k, v, micro=micro) for k, v in node.inputs.items())))
    sp = spread(node)
    if sp:
        f = percent if is_rated(node) else (lambda x: format_number(x, unit(node), micro=micro))
        out.append(("Over locations", f"min {f(sp[0])}, avg {f(sp[1])}, max {f(sp[2])}"))
    if value(node) is None and reason(node):
        out.append(("Not available", reason(node)))
    elif bound(node) and reason(node):
        out.append(("Upper bound", reason(node)))
    out += [("Warning", w) for w in node.warnings]
    return out
