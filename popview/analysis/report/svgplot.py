"""Line plots as inline SVG text, so the report needs neither Qt nor a
plotting library and stays one self-contained file."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")


@dataclass
class Line:
    label: str
    ys: list[float | None]
    colour: str = ""
    dashed: bool = False


@dataclass
class LinePlot:
    title: str
    xlabel: str
    ylabel: str
    xs: list[float]
    lines: list[Line] = field(default_factory=list)
    percent: bool = False         # y values are fractions shown as %
    hline: float | None = None    # a reference level (e.g. the 0.8 mark)
    width: int = 520
    height: int = 340


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    span = hi - lo or abs(hi) or 1.0
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _fmt(v: float, percent: bool) -> str:
    return f"{v * 100:g}%" if percent else f"{v:g}"


def render(plot: LinePlot) -> str:
    """The plot as an <svg> element string (log2 x axis when x spans >= 4x)."""
    W, H = plot.width, plot.height
    left, right, top, bottom = 58, 14, 30, 92
    pw, ph = W - left - right, H - top - bottom
    xs = [float(x) for x in plot.xs]
    logx = len(xs) > 1 and min(xs) > 0 and max(xs) / min(xs) >= 4
    tx = (lambda x: math.log2(x)) if logx else float
    x_lo, x_hi = (tx(min(xs)), tx(max(xs))) if xs else (0.0, 1.0)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    ys = [y for line in plot.lines for y in line.ys if y is not None and math.isfinite(y)]
    if plot.hline is not None:
        ys.append(plot.hline)
    y_lo = min([0.0] + ys)
    y_hi = max(ys) * 1.05 if ys else 1.0
    if y_hi <= y_lo:
        y_hi = y_lo + 1

    def px(x):
        return left + (tx(x) - x_lo) / (x_hi - x_lo) * pw

    def py(y):
        return top + ph - (y - y_lo) / (y_hi - y_lo) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="sans-serif" font-size="11" role="img" aria-label="{escape(plot.title)}">',
           f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{escape(plot.title)}</text>']
    for t in _nice_ticks(y_lo, y_hi):
        y = py(t)
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t, plot.percent)}</text>')
    for x in xs:
        X = px(x)
        out.append(f'<line x1="{X:.1f}" x2="{X:.1f}" y1="{top}" y2="{top + ph}" stroke="#f0f0f0"/>')
        out.append(f'<text x="{X:.1f}" y="{top + ph + 15}" text-anchor="middle">{x:g}</text>')
    if plot.hline is not None:
        y = py(plot.hline)
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#888" '
                   f'stroke-dasharray="2,3"/>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#666"/>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 32}" text-anchor="middle">'
               f'{escape(plot.xlabel)}{" (log scale)" if logx else ""}</text>')
    out.append(f'<text transform="translate(14,{top + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(plot.ylabel)}</text>')
    for i, line in enumerate(plot.lines):
        colour = line.colour or PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6,4"' if line.dashed else ""
        for seg in _segments(xs, line.ys):
            pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in seg)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            if not line.dashed:
                out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>' for x, y in seg]
    out += _legend(plot, left, top + ph + 44, pw)
    out.append("</svg>")
    return "\n".join(out)


def _segments(xs, ys):
    """Runs of consecutive finite points (a missing value breaks the line)."""
    seg = []
    for x, y in zip(xs, ys):
        if y is None or not math.isfinite(y):
            if seg:
                yield seg
            seg = []
        else:
            seg.append((x, y))
    if seg:
        yield seg


def _legend(plot: LinePlot, x0: float, y0: float, width: float) -> list[str]:
    out, x, y = [], x0, y0
    for i, line in enumerate(plot.lines):
        colour = line.colour or PALETTE[i % len(PALETTE)]
        w = 28 + 6.5 * len(line.label)
        if x + w > x0 + width:
            x, y = x0, y + 16
        dash = ' stroke-dasharray="6,4"' if line.dashed else ""
        out.append(f'<line x1="{x:.1f}" x2="{x + 20:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 24:.1f}" y="{y + 4:.1f}">{escape(line.label)}</text>')
        x += w
    return out
