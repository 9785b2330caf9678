"""`popview paramedir TRACE CFG... [-o OUT]`: a cfg's histograms as paramedir writes them.

Each histogram of each Paraver cfg that popview's cfg engine evaluates is written as the
tab-separated table paramedir writes (popview.analysis.cfg.paramedir). What popview does
not evaluate is one line on stderr naming the cfg, the histogram and why. Exit code 2 when
a cfg cannot be read (CfgError) or nothing could be written.
"""
from __future__ import annotations

import sys
from pathlib import Path

from popview import readers
from popview.analysis.cfg import CfgError, read_cfg
from popview.analysis.cfg.evaluate import NotEvaluated, TraceColumns
from popview.analysis.cfg.paramedir import evaluate_cfg, format_table, row_labels
from popview.commands.common import ProgressBar, add_cache_dir, fail, guarded
from popview.experiment import open as open_experiment


def add_parser(sub) -> None:
    p = sub.add_parser("paramedir", help="evaluate Paraver .cfg histograms on a trace, written as paramedir writes them",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("trace", metavar="TRACE", help=f"the trace: {readers.described()}")
    p.add_argument("cfgs", nargs="+", metavar="CFG", help="Paraver configuration files (.cfg)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="where to write: a file when there is one table, else a folder of "
                        "<cfg name>.txt (<cfg name>.<k>.txt for a cfg's k-th histogram); default: stdout")
    add_cache_dir(p)


@guarded
def run(args) -> int:
    views, refused = [], False
    for cfg in args.cfgs:
        try:
            views.append((Path(cfg), read_cfg(cfg)))
        except CfgError as exc:
            print(f"popview: error: {exc}", file=sys.stderr)
            refused = True
        except OSError as exc:
            print(f"popview: error: {cfg}: {exc.strerror or exc}", file=sys.stderr)
            refused = True
    if not views:
        return 2
    with open_experiment(args.trace, args.cache_dir, ProgressBar(args.trace)) as exp:
        if not exp.is_trace:
            return fail(f"{args.trace}: a profile has no timeline: cfg windows are evaluated on traces")
        try:
            trace = TraceColumns.from_cache(exp.reader, exp.definitions)
        except NotEvaluated as exc:
            return fail(f"{args.trace}: {exc}")
        rows = row_labels(exp.definitions)
        results = []
        for path, view in views:
            tables, skipped = evaluate_cfg(view, trace, rows, exp.definitions, as_paramedir=True)
            for s in skipped:
                print(f"popview: {path.name}: histogram {s.name!r} not evaluated: {s.reason}", file=sys.stderr)
            results.append((path, tables))
    written = _write(results, args.output)
    if not written:
        print("popview: error: no histogram of the given cfgs could be evaluated: nothing written", file=sys.stderr)
        return 2
    return 2 if refused else 0


def _write(results, output: str | None) -> int:
    tables = [(path, k, len(ts), t) for path, ts in results for k, t in enumerate(ts, 1)]
    if not tables:
        return 0
    if output is None:
        for i, (path, k, n, table) in enumerate(tables):
            if len(tables) > 1:
                sys.stdout.write(f"{'' if i == 0 else chr(10)}# {path.name}: {table.name}\n")
            sys.stdout.write(format_table(table))
        return len(tables)
    out = Path(output)
    if len(tables) == 1 and not out.is_dir():
        out.write_text(format_table(tables[0][3]))
        return 1
    out.mkdir(parents=True, exist_ok=True)
    for path, k, n, table in tables:
        stem = path.name[:-4] if path.name.endswith(".cfg") else path.name
        (out / (f"{stem}.txt" if n == 1 else f"{stem}.{k}.txt")).write_text(format_table(table))
    return len(tables)
