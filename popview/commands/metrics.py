"""`popview metrics TRACE...`: POP metrics of one run or a series, as a
table (metrics as rows, runs as columns, like Basic Analysis), JSON (the
trees with ids, values, inputs and not-available reasons) or CSV (one row
per metric and run)."""
from __future__ import annotations

import csv
import io
import json
import sys
from contextlib import ExitStack

from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.models import ALL, MODEL_IDS
from popview.analysis.report import nodes, series, variants
from popview.analysis.report import warnings as warn
from popview.analysis.series import Series
from popview.analysis.tree_delta import find_like
from popview.runs import series_groups
from popview.commands.common import (add_cache_dir, add_dask, add_paths, add_reference, expand_runs, fail,
                                     find_reference, guarded, open_runs)

FOCUS_HELP = "whole | auto | callpath:PATH | window:T0:T1 (seconds) | iterations:PATH:I:J (default: whole)"


def add_parser(sub) -> None:
    p = sub.add_parser("metrics", help="POP efficiency metrics of one run or a scaling series")
    add_paths(p)
    p.add_argument("--model", default="auto", choices=["auto", *MODEL_IDS, "all"],
                   help="metric model (default auto: the one that fits the data, as the report and the "
                        "Advisor pick it: pop-mpi, or hybrid-additive with threads; computation = IPC, clock "
                        "rate, useful instructions, granularity, vectorisation; io = I/O efficiency and shares; "
                        "all = every model)")
    p.add_argument("--focus", default="whole", help=FOCUS_HELP)
    add_reference(p)
    p.add_argument("--scaling", default="auto", choices=["strong", "weak", "auto"],
                   help="strong or weak scaling (default auto: guessed from the instruction counts per "
                        "processing element; strong without them)")
    p.add_argument("--format", default="table", choices=["table", "json", "csv"],
                   help="table for people (default), json (the metric trees) or csv (one row a metric and run)")
    p.add_argument("--no-replay", action="store_true",
                   help="skip the ideal-network replay (serialisation and transfer are then not available)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    add_cache_dir(p)
    add_dask(p, "convert the runs and compute their metric inputs and replays, a task a run,")


@guarded
def run(args) -> int:
    try:
        focus = Focus.parse(args.focus)
    except ValueError as exc:
        return fail(str(exc))
    paths = expand_runs(args.paths, args.reference)
    with ExitStack() as stack:
        # smallest run first, as the report and the window's Scaling table order them: a shell's
        # epoch_*.prv.gz gave the columns 16x1, 1x1, 2x1, 4x1, 8x1
        exps = series.ordered(open_runs(stack, paths, args, focus, not args.no_replay))
        reference = find_reference(exps, args.reference) if args.reference else None
        groups = [(None, exps)] if reference is not None else series_groups(exps)
        try:
            parts = []
            for name, runs in groups:
                s = Series(runs, reference=reference, scaling=args.scaling, focus=focus,
                           use_replay=not args.no_replay)
                models, why = pick_models(s, args.model)
                parts.append((name, s, models, why))
            text = render_groups(parts, args.format)
        except (FocusError, ValueError, KeyError) as exc:
            return fail(str(exc))
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as exc:          # a failed write names no file: name it
            raise OSError(exc.errno, exc.strerror, args.output) from None
    else:
        sys.stdout.write(text)
    return 0


def render_groups(parts, fmt: str) -> str:
    """One series as before; several (runs whose names differ in more than their size,
    popview.runs.series_groups) one after another, each against its own reference, said first."""
    if len(parts) == 1:
        _, s, models, why = parts[0]
        return RENDER[fmt](s, models, why)
    names = [name for name, *_ in parts]
    said = (f"the runs form {len(parts)} series by their names, which differ in more than their size "
            f"({', '.join(names)}): each is analysed apart, against its own smallest run; give --reference "
            "to compare them all as one series")
    if fmt == "json":
        return json.dumps({"note": said, "series": [{"name": name, **metrics_doc(s, models, why)}
                                                    for name, s, models, why in parts]}, indent=1) + "\n"
    if fmt == "csv":
        texts = [render_csv(s, models, why) for _, s, models, why in parts]
        sys.stderr.write(f"popview: {said}\n")
        return texts[0] + "".join(t.split("\n", 1)[1] for t in texts[1:])
    return f"Warning: {said}\n" + "".join(f"\n== Series {name} ({len(s.experiments)} runs) ==\n"
                                          f"{render_table(s, models, why)}" for name, s, models, why in parts)


def pick_models(s: Series, model: str) -> tuple[list[str], str]:
    """The models to show and a sentence saying why: `auto` is the variant that fits the
    reference run, as the report and the Advisor choose it."""
    if model == "all":
        return list(ALL), "every model (as requested)"
    if model != "auto":
        return [model], f"{model} (as requested)"
    variant, reason = variants.preferred(s.reference)
    return list(variant.models), f"{variant.label} (fits the data: {reason} Others: --model)"


def _cell(node) -> str:
    """The value as the HTML report writes it (percent, seconds, units), '!' after a warned one."""
    if node is None:
        return ""
    return nodes.format_value(node) + ("!" if node.warnings and node.value is not None else "")


def columns(s: Series, models: list[str]) -> list[tuple[str, str, dict]]:
    """(label, source, {model: tree}) per run of the series, in order."""
    return [(lab, str(e.source), {m: s.trees(m)[i] for m in models})
            for i, (e, lab) in enumerate(zip(s.experiments, s.labels))]


class Footnotes:
    """Reasons said once: a clause ('; '-separated) of at least MIN characters that recurs on
    several reason lines of the output (a Score-P profile's 500-character fork-and-join
    explanation on both OpenMP lines and again under every model) becomes a numbered footnote
    the lines refer to; what a line says of its own stays on it. The JSON keeps every reason whole."""
    MIN = 40

    def __init__(self, texts):
        count: dict[str, int] = {}
        for text in texts:
            for clause in set(text.split("; ")):
                count[clause] = count.get(clause, 0) + 1
        self.shared = {c for c, k in count.items() if k > 1 and len(c) >= self.MIN}
        self.numbers: dict[str, int] = {}

    def cite(self, text: str) -> tuple[str, str]:
        """(' [n]' or '', the rest of `text` said on the line)."""
        clauses = text.split("; ")
        shared = [c for c in clauses if c in self.shared]
        if not shared:
            return "", text
        n = self.numbers.setdefault("; ".join(shared), len(self.numbers) + 1)
        return f" [{n}]", "; ".join(c for c in clauses if c not in self.shared)

    def render(self) -> str:
        if not self.numbers:
            return ""
        return "\nReasons:\n" + "".join(f"  [{n}] {text}\n" for text, n in self.numbers.items())


def _reason_lines(trees, labels) -> list[tuple[str, str, str, str]]:
    """(kind, which runs, metric names, reason) under a table: kind 'n/a', 'upper bound (\u2264)'
    or 'warning'."""
    reasons, runs = {}, {}
    for t, lab in zip(trees, labels):
        for _, n in t.walk():
            if n.reason and (n.value is None or n.bound):
                reasons.setdefault(n.reason, []).append(n.name)
                runs.setdefault(n.reason, []).append(lab)
            for w in n.warnings:
                reasons.setdefault(f"warning: {w}", []).append(f"{n.name} ({t.experiment})")
    out = []
    for reason, names in reasons.items():
        # a reason of some runs only says which (a profile's "... gives 95.0%" of one run)
        where = sorted(set(runs.get(reason, [])), key=labels.index)
        which = f" [{', '.join(where)}]" if len(labels) > 1 and where and len(where) < len(labels) else ""
        names = ", ".join(sorted(set(names)))
        if reason.startswith("warning: "):
            out.append(("warning", "", names, reason[len("warning: "):]))
        elif reason.startswith("upper bound: "):
            out.append(("upper bound (\u2264)", which, names, reason[len("upper bound: "):]))
        else:
            out.append(("n/a", which, names, reason))
    return out


def render_table(s: Series, models: list[str], why: str = "", extra=()) -> str:
    """Metrics as rows, runs as columns; `extra`: more (label, source, {model: tree}) columns
    (`popview diff`'s A - B). Recurring reasons are numbered footnotes under the last table."""
    out = io.StringIO()
    cols = columns(s, models) + list(extra)
    labels = [c[0] for c in cols]
    focus = s.trees(models[0])[0].focus
    out.write(f"Focus: {focus}    Reference: {s.reference.label}    {s.scaling_reason}\n")
    if why:
        out.write(f"Model: {why}\n")
    for lab, texts in run_warnings(s, labels):
        for text in texts:
            out.write(f"Warning{f' [{lab}]' if len(labels) > 1 else ''}: {text}\n")
    lines = {model: _reason_lines([c[2][model] for c in cols], labels) for model in models}
    notes = Footnotes([line[3] for model in models for line in lines[model]])
    for model in models:
        trees = [c[2][model] for c in cols]
        rows = [(("  " * d) + n.name, [find_like(t, n.id) for t in trees]) for d, n in trees[0].walk()]
        width = max([len(r[0]) for r in rows] + [len(trees[0].title)]) + 2
        cells = [(name, [_cell(n) for n in nodes]) for name, nodes in rows]
        # a long label or value (93,242,514,399 instructions) never runs into the next column
        col = max([14] + [len(lab) + 2 for lab in labels] + [len(c) + 2 for _, cs in cells for c in cs])
        out.write("\n" + trees[0].title.ljust(width) + "".join(f"{lab:>{col}s}" for lab in labels) + "\n")
        out.write("-" * (width + col * len(labels)) + "\n")
        for name, texts in cells:
            out.write(name.ljust(width) + "".join(f"{c:>{col}s}" for c in texts) + "\n")
        for kind, which, names, reason in lines[model]:
            mark, rest = notes.cite(reason)
            out.write(f"  {kind}{which}: {names}{mark}{': ' + rest if rest else ''}\n")
        for note in sorted({note for t in trees for note in t.notes}):
            out.write(f"  note: {note}\n")
    out.write(notes.render())
    return out.getvalue()


def run_warnings(s: Series, labels: list[str]) -> list[tuple[str, list[str]]]:
    """(label, the run's own warnings: a truncated trace, burst mode, flushing in the focus)
    per run of the series, as the Advisor and the report show them."""
    return [(lab, warn.run_warnings(exp, s.focus)) for exp, lab in zip(s.experiments, labels)]


def metrics_doc(s: Series, models: list[str], why: str = "", extra=()) -> dict:
    """What --format json writes (the metric trees with ids, values, inputs and reasons, and
    each run's own warnings)."""
    warned = dict(run_warnings(s, list(s.labels)))
    return {"focus": s.focus.to_dict(), "reference": str(s.reference.source), "scaling": s.scaling,
            "scaling_reason": s.scaling_reason, "models": models, "models_reason": why,
            "runs": [{"source": src, "label": lab, "warnings": warned.get(lab, []),
                      "models": {m: t.to_dict() for m, t in trees.items()}}
                     for lab, src, trees in columns(s, models) + list(extra)]}


def render_json(s: Series, models: list[str], why: str = "", extra=()) -> str:
    return json.dumps(metrics_doc(s, models, why, extra), indent=1) + "\n"


def render_csv(s: Series, models: list[str], why: str = "", extra=()) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["run", "source", "model", "metric", "name", "kind", "value", "unit", "reason", "bound"])
    cols = columns(s, models) + list(extra)
    for m in models:
        for lab, src, trees in cols:
            for _, n in trees[m].walk():
                w.writerow([lab, src, m, n.id, n.name, n.kind, "" if n.value is None else repr(n.value),
                            n.unit, n.reason or "", n.bound or ""])
    return out.getvalue()


RENDER = {"table": render_table, "json": render_json, "csv": render_csv}
