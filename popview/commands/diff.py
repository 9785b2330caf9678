"""`popview diff A B`: where two runs differ, call path by call path.

Both runs' profiles (a Cube profile, or a trace's profile built at conversion)
are aligned by call path (popview.analysis.algebra) and A - B is listed for
the call paths whose exclusive value of the metric changed most, with the
call paths present in one run only. Output: a table, JSON or CSV; with -o the
difference of every metric is also written as a .cubex (popview.commands.combine).
With --show metrics the output is `popview metrics`' for A and B (B the
reference) and a third column A - B of their metrics (percentage points for
efficiencies: popview.analysis.tree_delta).
"""
from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np

from popview.analysis import algebra
from popview.analysis.models import MODEL_IDS
from popview.analysis.series import Series
from popview.analysis.tree_delta import difference_tree
from popview.commands import combine
from popview.commands.common import ProgressBar, add_cache_dir, fail, guarded
from popview.experiment import open as open_experiment


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="where two runs differ (A - B per call path), e.g. before and after a change")
    p.add_argument("a", metavar="A", help="a trace or profile (the minuend)")
    p.add_argument("b", metavar="B", help="a trace or profile of the same program (subtracted)")
    p.add_argument("--metric", default="time", help="metric id to compare (default time; `popview info` lists a "
                                                    "profile's metrics)")
    p.add_argument("--top", type=int, default=15, help="call paths to list, largest changes first (default 15)")
    p.add_argument("--collapse", default="none", choices=["none", "process", "run"],
                   help="runs of different shapes: compare per process or the whole run (default: refuse)")
    p.add_argument("--format", default="table", choices=["table", "json", "csv"],
                   help="table for people (default), json or csv")
    p.add_argument("--show", default="callpaths", choices=["callpaths", "metrics"],
                   help="callpaths (default): the call paths that changed most; metrics: the POP metrics of A "
                        "and B and their difference A - B, as `popview metrics` writes them")
    p.add_argument("--model", default="auto", choices=["auto", *MODEL_IDS, "all"],
                   help="with --show metrics: the metric model (default auto, as `popview metrics`)")
    combine.add_output(p, False, "the difference A - B of every metric both runs have")
    add_cache_dir(p)


@guarded
def run(args) -> int:
    problem = combine.check_output(args.output)
    if problem:
        return fail(problem)
    with open_experiment(args.a, args.cache_dir, ProgressBar(args.a)) as a, \
            open_experiment(args.b, args.cache_dir, ProgressBar(args.b)) as b:
        pa, pb = a.profile(), b.profile()
        loc_process = [_loc_process(a), _loc_process(b)] if args.collapse == "process" else None
        try:
            d = algebra.difference(pa, pb, collapse=args.collapse, loc_process=loc_process)
        except algebra.AlgebraError as exc:
            return fail(combine.refusal([args.a, args.b], exc, args.collapse))
        if args.metric not in d.profile.values:
            return fail(f"metric {args.metric!r} is not in both runs (both have: "
                        f"{', '.join(sorted(d.profile.values)) or 'none'})")
        if args.show == "metrics":
            text = metrics_text(a, b, args.model, args.format)
        else:
            rows = algebra.changed_most(d, pa, pb, args.metric, args.top)
            unit = d.profile.metric(args.metric).unit
            text = {"table": _table, "json": _json, "csv": _csv}[args.format](a.name, b.name, args.metric, unit,
                                                                             rows, d)
        if args.output:
            e = combine.export(args.output, d, [a, b], args.collapse)
            sys.stderr.write(combine.summary(e, d, [a, b], "table"))
    sys.stdout.write(text)
    return 0


def metrics_text(a, b, model: str, fmt: str) -> str:
    """`popview metrics A B` (B the reference) with a third column: A - B of each metric."""
    from popview.commands import metrics as metrics_command
    s = Series([a, b], reference=b)
    models, why = metrics_command.pick_models(s, model)
    delta = ("A - B", f"{a.source} - {b.source}",
             {m: difference_tree(s.trees(m)[0], s.trees(m)[1], "A", "B") for m in models})
    return metrics_command.RENDER[fmt](s, models, why, [delta])


def _loc_process(exp) -> np.ndarray:
    return combine.loc_process(exp)


def _table(a: str, b: str, metric: str, unit: str, rows: list[dict], d) -> str:
    out = [f"{metric} ({unit or 'value'}), exclusive per call path: A = {a}, B = {b}; A - B, largest changes first"]
    out += [f"  note: {n}" for n in d.notes]
    width = max([len(r["callpath"]) for r in rows] + [9])
    width = min(width, 100)
    out.append(f"{'call path':<{width}}  {'A':>14}  {'B':>14}  {'A - B':>14}  in")
    for r in rows:
        path = r["callpath"] if len(r["callpath"]) <= width else "..." + r["callpath"][-(width - 3):]
        out.append(f"{path:<{width}}  {r['a']:14.6g}  {r['b']:14.6g}  {r['a_minus_b']:+14.6g}  {r['in']}")
    if not rows:
        out.append("(no call path differs)")
    return "\n".join(out) + "\n"


def _json(a, b, metric, unit, rows, d) -> str:
    return json.dumps({"a": a, "b": b, "metric": metric, "unit": unit, "notes": d.notes, "callpaths": rows},
                      indent=2) + "\n"


def _csv(a, b, metric, unit, rows, d) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["callpath", "a", "b", "a_minus_b", "in"])
    for r in rows:
        w.writerow([r["callpath"], r["a"], r["b"], r["a_minus_b"], r["in"]])
    return buf.getvalue()
