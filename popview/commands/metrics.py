"""`popview metrics TRACE...`: POP metrics of one run or a series, as a
table (metrics as rows, runs as columns, like Basic Analysis), JSON (the
trees with ids, values, inputs and not-available reasons) or CSV (one row
per metric and run)."""
from __future__ import annotations

import csv
import io
import json
import sys

from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.models import ALL, MODEL_IDS
from popview.analysis.series import Series
from popview.commands.common import add_cache_dir, fail, guarded

RATED = ("efficiency", "scalability")


def add_parser(sub) -> None:
    p = sub.add_parser("metrics", help="POP efficiency metrics of one run or a scaling series")
    p.add_argument("paths", nargs="+", metavar="TRACE")
    p.add_argument("--model", default="pop-mpi", choices=[*MODEL_IDS, "all"],
                   help="metric model (default pop-mpi; all = every model)")
    p.add_argument("--focus", default="whole",
                   help="whole | auto | callpath:PATH | window:T0:T1 (seconds) | iterations:PATH:I:J")
    p.add_argument("--reference", metavar="TRACE", help="reference run of the series (default: fewest threads)")
    p.add_argument("--scaling", default="auto", choices=["strong", "weak", "auto"])
    p.add_argument("--format", default="table", choices=["table", "json", "csv"])
    p.add_argument("--no-replay", action="store_true", help="skip the ideal-network replay")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    add_cache_dir(p)


@guarded
def run(args) -> int:
    try:
        focus = Focus.parse(args.focus)
    except ValueError as exc:
        return fail(str(exc))
    paths = list(args.paths)
    if args.reference and args.reference not in paths:
        paths.insert(0, args.reference)
    models = list(ALL) if args.model == "all" else [args.model]
    try:
        s = Series(paths, reference=args.reference, scaling=args.scaling, focus=focus, cache_dir=args.cache_dir,
                   use_replay=not args.no_replay)
        text = {"table": render_table, "json": render_json, "csv": render_csv}[args.format](s, models)
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


def _cell(node) -> str:
    if node is None:
        return ""
    if node.value is None:
        return "n/a"
    if node.kind in RATED:
        text = f"{node.value * 100:.2f}%"
        return text + ("!" if node.warnings else "")
    v = node.value
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.4e}"


def render_table(s: Series, models: list[str]) -> str:
    out = io.StringIO()
    labels = s.labels
    focus = s.trees(models[0])[0].focus
    out.write(f"Focus: {focus}    Reference: {s.reference.label}    {s.scaling_reason}\n")
    for model in models:
        trees = s.trees(model)
        rows = [(("  " * d) + n.name, [t.find(n.id) for t in trees]) for d, n in trees[0].walk()]
        width = max([len(r[0]) for r in rows] + [len(trees[0].title)]) + 2
        out.write("\n" + trees[0].title.ljust(width) + "".join(f"{lab:>14s}" for lab in labels) + "\n")
        out.write("-" * (width + 14 * len(labels)) + "\n")
        for name, nodes in rows:
            out.write(name.ljust(width) + "".join(f"{_cell(n):>14s}" for n in nodes) + "\n")
        reasons = {}
        for t in trees:
            for _, n in t.walk():
                if n.value is None and n.reason:
                    reasons.setdefault(n.reason, []).append(n.name)
                for w in n.warnings:
                    reasons.setdefault(f"warning: {w}", []).append(f"{n.name} ({t.experiment})")
        for reason, names in reasons.items():
            out.write(f"  n/a: {', '.join(sorted(set(names)))}: {reason}\n" if not reason.startswith("warning")
                      else f"  {reason}: {', '.join(sorted(set(names)))}\n")
        notes = {note for t in trees for note in t.notes}
        for note in sorted(notes):
            out.write(f"  note: {note}\n")
    return out.getvalue()


def render_json(s: Series, models: list[str]) -> str:
    doc = {"focus": s.focus.to_dict(), "reference": str(s.reference.source), "scaling": s.scaling,
           "scaling_reason": s.scaling_reason,
           "runs": [{"source": str(e.source), "label": lab,
                     "models": {m: s.trees(m)[i].to_dict() for m in models}}
                    for i, (e, lab) in enumerate(zip(s.experiments, s.labels))]}
    return json.dumps(doc, indent=1) + "\n"


def render_csv(s: Series, models: list[str]) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["run", "source", "model", "metric", "name", "kind", "value", "unit", "reason"])
    for m in models:
        for lab, e, t in zip(s.labels, s.experiments, s.trees(m)):
            for _, n in t.walk():
                w.writerow([lab, str(e.source), m, n.id, n.name, n.kind, "" if n.value is None else repr(n.value),
                            n.unit, n.reason or ""])
    return out.getvalue()
