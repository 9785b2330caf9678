"""The report: experiments, focus, metric tables, scaling plot, bookmarks and
warnings in one self-contained HTML file (the "reporting" step of POP's
structured approach). No Qt: the CLI and the GUI's File > Export report
both call `build_report` / `write_report`; the GUI adds view pictures.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from popview import atomic
from popview._version import __version__
from popview.analysis.focus import Focus
from popview.analysis.report import compute, html, nodes, series, variants
from popview.analysis.report import warnings as warn


@dataclass
class BookmarkShot:
    """A bookmark as the report shows it: its name, note, focus and a picture of the view (PNG)."""

    name: str
    note: str = ""
    focus: str = ""
    picture: bytes | None = None


def bookmarks_of(session, pictures: dict | None = None) -> list[BookmarkShot]:
    """BookmarkShots from a popview.session Session (pictures: bookmark id -> PNG bytes)."""
    out = []
    for bm in session.bookmarks if session is not None else ():
        focus = (bm.view or {}).get("app", {}).get("focus")
        label = Focus.from_dict(focus).label() if isinstance(focus, dict) else ""
        out.append(BookmarkShot(bm.name, bm.note, label, (pictures or {}).get(bm.id)))
    return out


def chosen_variants(exps: list, keys: list[str] | None = None) -> list:
    """The variants to report: the given keys, else the preferred one of the largest run plus
    computation / I/O, restricted to those that apply to every run."""
    common = [v for v in variants.VARIANTS if all(v in variants.applicable(e) for e in exps)]
    if keys:
        unknown = [k for k in keys if k not in variants.BY_KEY]
        if unknown:
            raise ValueError(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(variants.BY_KEY)}")
        return [variants.BY_KEY[k] for k in keys]
    best = variants.preferred(series.ordered(exps)[-1])[0]
    return [v for v in common if v is best or v.key == "computation-io"]


def build_report(exps: list, focus: Focus | None = None, variant_keys: list[str] | None = None,
                 bookmarks: list[BookmarkShot] | None = None, reference_index: int = 0, mode: str = "auto",
                 title: str = "popview performance report", bookmarks_note: str = "") -> str:
    """The whole report as one HTML string."""
    if not exps:
        raise ValueError("a report needs at least one experiment")
    focus = focus or Focus.whole()
    runs = series.ordered(exps)
    chosen = chosen_variants(runs, variant_keys)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [_experiments(runs), html.section("Focus of analysis", f"<p><b>{escape(focus.label())}</b></p>")]
    found: list[str] = []
    said: set[str] = set()              # engine notes already written (each once in the report)
    metric_parts, tables = [], []
    for v in chosen:
        body, w, t = _variant(runs, v, focus, reference_index, mode, said)
        metric_parts.append(f"<h3>{escape(v.label)}</h3>{body}")
        found += [x for x in w if x not in found]
        tables += [(x, v.label) for x in t]
    sections.append(html.section("Warnings", html.warnings_box(found) or "<p>None.</p>", "warnings"))
    sections.append(html.section("POP metrics", html.legend() + "".join(metric_parts), "metrics"))
    if tables:
        sections.append(_scaling(*tables[0]))
    sections.append(_bookmarks(bookmarks, bookmarks_note))
    return html.page(title, f"generated {stamp} by popview {__version__}", sections)


def write_report(path, html_text: str) -> Path:
    """Write atomically (popview.atomic): a half-written report is never left behind."""
    return atomic.write_text(path, html_text)


def _experiments(runs: list) -> str:
    rows = []
    for e in runs:
        info = e.info()
        rows.append([escape(e.name), escape(e.label), escape(f"{info['format']} ({info['tool']})"),
                     nodes.format_seconds(info["duration_ns"] / 1e9) if info["duration_ns"] else "not recorded",   # a profile
                     escape(", ".join(info["paradigms"]) or "-"),
                     html.short_list(info["counters"]), f'<span class="sub">{escape(str(e.source))}</span>'])
    return html.section("Experiments", html.table(
        ["Name", "Shape", "Format", "Duration", "Paradigms", "Counters", "Source"], rows, raw=True))


def _variant(runs, v, focus, reference_index, mode, said: set[str]) -> tuple[str, list[str], list]:
    """One variant's table(s): a metric tree for one run, a scaling table per model for several."""
    def new_notes(trees) -> str:
        fresh = [n for n in warn.notes(trees) if n not in said]
        said.update(fresh)
        return html.notes(fresh)

    if len(runs) == 1:
        trees = compute.variant(runs[0], v, focus)
        return (html.metric_tree([r for t in trees for r in t.roots]) + new_notes(trees),
                warn.collect(runs[0], trees, focus), [])
    parts, found, tables = [], [], []
    for model in v.models:
        t = series.build(runs, model, focus, reference_index, mode)
        tables.append(t)
        parts.append(html.scaling_table(t))
        for exp, tree in zip(runs, t.trees):
            found += [f"{exp.label}: {w}" for w in warn.collect(exp, [tree], focus)]
        parts.append(new_notes(t.trees))
    return "".join(parts), found, tables


def _scaling(t, label: str) -> str:
    ref = t.labels[t.reference]
    return html.section("Scaling", f"<p>{escape(t.mode.capitalize())} scaling, reference run {escape(ref)}, "
                        f"{escape(label)} model.</p><div class=\"plots\">{html.scaling_svg(t)}</div>",
                        "scaling")


def _bookmarks(bookmarks: list[BookmarkShot] | None, note: str) -> str:
    if not bookmarks:
        return html.section("Bookmarks", f"<p>{escape(note or 'None.')}</p>")
    parts = []
    for b in bookmarks:
        pic = html.picture(b.picture, b.name) if b.picture else "<p class=\"sub\">(no picture of this view)</p>"
        focus = f"<div class=\"sub\">focus: {escape(b.focus)}</div>" if b.focus else ""
        parts.append(f"<div class=\"bookmark\"><b>{escape(b.name)}</b>{focus}"
                     f"<p>{escape(b.note)}</p>{pic}</div>")
    return html.section("Bookmarks", "".join(parts))
