"""Reading a metric-model result tree for display.

The analysis engine returns nodes (id, name, description, formula, kind,
value or None with a reason, inputs, children, warnings, min/avg/max over
locations). These helpers turn one node into the words and numbers the
Advisor, the scaling table and the report show, in one place.
"""
from __future__ import annotations

from popview.analysis.report.scale import is_number, percent, rating

RATED_KINDS = ("efficiency", "scalability")


def walk(node, depth: int = 0):
    """(depth, node) in pre-order."""
    yield depth, node
    for child in node.children or ():
        yield from walk(child, depth + 1)


def value(node):
    v = getattr(node, "value", None)
    return float(v) if is_number(v) else None


def is_rated(node) -> bool:
    """Efficiencies and scalabilities are judged on the 0..1 scale; plain values are not."""
    return getattr(node, "kind", "efficiency") in RATED_KINDS


def reason(node) -> str:
    return getattr(node, "reason", None) or ""


def unit(node) -> str:
    return getattr(node, "unit", None) or ""


def format_number(v: float, unit_text: str = "") -> str:
    if unit_text == "s":
        return format_seconds(v)
    text = f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return f"{text} {unit_text}".strip()


def format_seconds(v: float) -> str:
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(v) >= scale:
            return f"{v / scale:.4g} {name}"
    return f"{v * 1e9:.4g} ns" if v else "0 s"


def is_share(node) -> bool:
    """A fraction of the time (I/O shares): shown as a percentage, but not rated."""
    return unit(node) in ("%", "share") or getattr(node, "id", "").endswith("_share")


def format_value(node) -> str:
    return format_as(node, value(node))


def format_as(node, v: float | None) -> str:
    """`v` written the way `node`'s values are (percent, seconds, GHz...)."""
    if v is None:
        return "n/a"
    if getattr(node, "id", "") == "speedup":
        return f"{v:.2f}"
    return percent(v) if is_rated(node) or is_share(node) else format_number(v, unit(node))


def rating_word(node) -> str:
    v = value(node)
    if v is None:
        return "not available"
    if not is_rated(node):
        return ""
    if getattr(node, "kind", "") == "efficiency" and v > 1.0 + 1e-9:
        return "Inconsistent (> 100 %)"
    return rating(v)


def format_input(name: str, v) -> str:
    """An input line: seconds for time-like names, plain numbers otherwise."""
    if not is_number(v):
        return f"{name} = {v}"
    timeish = any(k in name.lower() for k in ("time", "runtime", "useful", "mpi", "_s", "duration"))
    counterish = name.lower().startswith(("ins", "cyc", "papi"))
    shown = format_seconds(v) if timeish and not counterish and abs(v) < 1e6 else f"{v:.6g}"
    return f"{name} = {shown}"


def spread(node) -> tuple[float, float, float] | None:
    """(min, avg, max) over locations, when the engine gives them."""
    stats = [getattr(node, k, None) for k in ("min", "avg", "max")]
    if all(is_number(s) for s in stats):
        return tuple(float(s) for s in stats)
    return None


def help_lines(node) -> list[tuple[str, str]]:
    """(heading, text) pairs: the definition, formula, inputs, spread, reason."""
    out = []
    if getattr(node, "description", ""):
        out.append(("", node.description))
    if getattr(node, "formula", ""):
        out.append(("Formula", node.formula))
    inputs = getattr(node, "inputs", None) or {}
    if inputs:
        out.append(("Inputs", "; ".join(format_input(k, v) for k, v in inputs.items())))
    sp = spread(node)
    if sp:
        f = percent if is_rated(node) else (lambda x: format_number(x, unit(node)))
        out.append(("Over locations", f"min {f(sp[0])}, avg {f(sp[1])}, max {f(sp[2])}"))
    if value(node) is None and reason(node):
        out.append(("Not available", reason(node)))
    for w in getattr(node, "warnings", None) or ():
        out.append(("Warning", str(w)))
    return out
