"""Rendering the report: one self-contained HTML page (inline CSS, inline
SVG plots, pictures as data: URIs), readable offline and in any browser."""
from __future__ import annotations

import base64
from html import escape

from popview.analysis.report import nodes, svgplot
from popview.analysis.report.scale import ACCEPTABLE, colour, hex_colour, is_number, text_on

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1200px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; }
h2 { font-size: 1.25em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
.sub { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: middle; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.na { color: #888; font-style: italic; }
tr.na td { color: #888; }
.bar { position: relative; width: 200px; height: 12px; background: #ececec; border: 1px solid #bbb; }
.bar .fill { position: absolute; left: 0; top: 0; bottom: 0; }
.bar .fill.bound { background-image: repeating-linear-gradient(135deg, rgba(255,255,255,.75) 0 3px,
  transparent 3px 6px); border-right: 2px dotted #333; }
.bar .mark { position: absolute; top: -2px; bottom: -2px; border-left: 1px dashed #333; }
.bar .full { position: absolute; top: -2px; bottom: -2px; border-left: 1px solid #000; }
.warn { background: #fff4ce; border: 1px solid #e0c060; border-radius: 4px; padding: 0.5em 0.8em; margin: 0.5em 0; }
.warn li { margin: 0.2em 0; }
.note { background: #eef4fb; border: 1px solid #b9cde5; border-radius: 4px; padding: 0.5em 0.8em; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 2px; font-size: 0.85em; }
.bookmark { border: 1px solid #ddd; border-radius: 4px; padding: 0.6em 1em; margin: 0.8em 0; }
.bookmark img { max-width: 100%; border: 1px solid #ccc; margin-top: 0.4em; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
details { margin: 0.3em 0; }
"""


def page(title: str, subtitle: str, sections: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><div class=\"sub\">{escape(subtitle)}</div>"
            + "".join(sections) + "</body></html>\n")


def section(title: str, body: str, anchor: str = "") -> str:
    a = f' id="{escape(anchor)}"' if anchor else ""
    return f"<h2{a}>{escape(title)}</h2>{body}"


def table(head: list[str], rows: list[list[str]], raw: bool = False) -> str:
    """A plain table; cells are escaped unless `raw` (then they are HTML)."""
    cell = (lambda c: c) if raw else escape
    out = ["<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{cell(str(c))}</td>" for c in r) + "</tr>" for r in rows]
    return "".join(out) + "</table>"


def short_list(items: list[str], shown: int = 3) -> str:
    """The first few items, the rest behind a hover title (long counter lists)."""
    if not items:
        return "none"
    text = escape(", ".join(items[:shown]))
    if len(items) > shown:
        text += f' <span class="sub" title="{escape(", ".join(items))}">+{len(items) - shown} more</span>'
    return text


def warnings_box(items: list[str]) -> str:
    if not items:
        return ""
    return "<div class=\"warn\"><b>Warnings</b><ul>" + "".join(f"<li>{escape(w)}</li>" for w in items) + "</ul></div>"


def notes(items: list[str]) -> str:
    if not items:
        return ""
    return "<ul class=\"sub\">" + "".join(f"<li>{escape(n)}</li>" for n in items) + "</ul>"


def legend() -> str:
    steps = [0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0]
    spans = "".join(f'<span style="background:{hex_colour(v)};color:{text_on(colour(v))}">{v * 100:.0f} %</span>'
                    for v in steps)
    return (f'<p class="legend">Colour scale: {spans} &nbsp; dashed mark: {ACCEPTABLE * 100:.0f} % '
            'acceptable; values above 100 % (scalabilities) run past the solid line.</p>')


def bar(v: float | None, scale: float, bound: str | None = None) -> str:
    if v is None:
        return ""
    w = min(max(v, 0.0), scale) / scale * 100
    full = f'<div class="full" style="left:{100 / scale:.2f}%"></div>' if scale > 1 else ""
    cls = "fill bound" if bound else "fill"
    return (f'<div class="bar"><div class="{cls}" style="width:{w:.2f}%;background:{hex_colour(v)}"></div>'
            f'<div class="mark" style="left:{ACCEPTABLE / scale * 100:.2f}%"></div>{full}</div>')


def _help(node) -> str:
    return " | ".join(f"{h}: {t}" if h else t for h, t in nodes.help_lines(node))


def _indent(depth: int) -> str:
    return f"padding-left:{0.5 + 1.4 * depth:.1f}em"


def metric_tree(roots: list) -> str:
    """One experiment: metric, value, bar, rating / reason, formula and inputs."""
    values = [nodes.value(n) for r in roots for _, n in r.walk() if nodes.is_rated(n)]
    scale = max([1.0] + [v for v in values if v is not None])
    out = ["<table><tr><th>Metric</th><th>Value</th><th>Scale</th><th>Rating</th><th>Formula and inputs</th></tr>"]
    for root in roots:
        for depth, n in root.walk():
            v = nodes.value(n)
            detail = escape(n.formula)
            if n.inputs:
                detail += "<br><span class=\"sub\">" + escape(
                    "; ".join(nodes.format_input(k, x) for k, x in n.inputs.items())) + "</span>"
            if nodes.bound(n):
                detail += f"<br><span class=\"sub\">{escape(nodes.reason(n))}</span>"
            rating = escape(nodes.rating_word(n)) if v is not None else escape(f"not available: {nodes.reason(n)}")
            cls = ' class="na"' if v is None else ""
            out.append(f'<tr{cls} title="{escape(_help(n))}"><td style="{_indent(depth)}">{escape(n.name)}</td>'
                       f'<td class="num">{escape(nodes.format_value(n))}</td>'
                       f'<td>{bar(v, scale, nodes.bound(n)) if nodes.is_rated(n) else ""}</td><td>{rating}</td>'
                       f'<td>{detail}</td></tr>')
    return "".join(out) + "</table>"


def scaling_table(t) -> str:
    """Several runs: metrics as rows, runs as columns, cells coloured."""
    head = "".join(f"<th>{escape(lab)}{' (ref)' if i == t.reference else ''}</th>" for i, lab in enumerate(t.labels))
    out = [f"<table><tr><th>Metric</th>{head}</tr>"]
    for r in t.rows:
        cells = []
        for i, (v, why) in enumerate(zip(r.values, r.reasons)):
            if v is None:
                cells.append(f'<td class="num na" title="{escape(why)}">n/a</td>')
            elif r.kind in nodes.RATED_KINDS:
                rgb = colour(v)
                tip = f' title="{escape(why)}"' if i < len(r.bounds) and r.bounds[i] else ""
                cells.append(f'<td class="num"{tip} style="background:{hex_colour(v)};color:{text_on(rgb)}">'
                             f'{escape(r.text(i))}</td>')
            else:
                cells.append(f'<td class="num">{escape(r.text(i))}</td>')
        out.append(f'<tr title="{escape(_help(r.node))}"><td style="{_indent(r.depth)}">{escape(r.name)}</td>'
                   + "".join(cells) + "</tr>")
    if any(is_number(v) for v in t.runtimes):
        def fmt(vals, f):
            return "".join(f'<td class="num">{f(v) if is_number(v) else "n/a"}</td>' for v in vals)
        out.append(f"<tr><td>Runtime</td>{fmt(t.runtimes, nodes.format_seconds)}</tr>")
    if t.row("speedup"):
        out.append(f"<tr><td>Ideal speedup</td>{fmt(t.ideal_speedup(), lambda v: f'{v:.2f}')}</tr>")
    out.append("</table>")
    missing = sorted({(r.name, why) for r in t.rows for v, why in zip(r.values, r.reasons) if v is None and why})
    if missing:
        out.append("<details open><summary>Not available, and why</summary><ul>" +
                   "".join(f"<li><b>{escape(n)}</b>: {escape(w)}</li>" for n, w in missing) + "</ul></details>")
    return "".join(out)


def scaling_svg(t) -> str:
    """Speedup against the ideal, and the top-level efficiencies, as two SVG plots side by side."""
    xs = t.elements
    speed = svgplot.LinePlot("Speedup", "processing elements", "speedup", xs, [
        svgplot.Line("ideal", t.ideal_speedup(), "#555555", dashed=True),
        svgplot.Line("measured", t.speedup(), "#1f77b4")])
    effs = [r for r in t.rows if r.depth <= 1 and r.kind in nodes.RATED_KINDS]
    eff = svgplot.LinePlot("Efficiencies", "processing elements", "efficiency", xs,
                           [svgplot.Line(r.name, r.values) for r in effs], percent=True, hline=ACCEPTABLE)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{speed.width + eff.width + 20}" height="{speed.height}">'
            f'<g>{svgplot.render(speed)}</g><g transform="translate({speed.width + 20},0)">'
            f'{svgplot.render(eff)}</g></svg>')


def picture(png: bytes, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
