"""`popview paramedir TRACE CFG [OUT] [CFG [OUT]]... [-o DIR]`: what paramedir writes for each cfg.

As BSC's paramedir: a cfg with histograms gives its last histogram as the tab-separated table
paramedir writes (the others are computed and dropped by paramedir: `--all-histograms` writes
them too); a cfg with only timelines gives its last window's values, one line per interval
(paramedir's .csv). An OUT after a cfg names its output, else it is named after the cfg without
.cfg (a timeline's name gets .csv unless it has it); cfgs are taken in the order of their paths
and a later output of the same name replaces an earlier one, as paramedir does. Without -o and
without an OUT the outputs go to stdout. What popview does not evaluate is one line on stderr
naming the cfg and why. Exit code 2 when a cfg cannot be read (CfgError) or nothing is written.
"""
from __future__ import annotations

import sys
from pathlib import Path

from popview import readers
from popview.analysis.cfg import CfgError, read_cfg
from popview.analysis.cfg.evaluate import NotEvaluated, TraceColumns
from popview.analysis.cfg.paramedir import PRECISION, Options, evaluate_cfg, format_table, paramedir_job, row_labels
from popview.commands.common import ProgressBar, add_cache_dir, fail, guarded
from popview.experiment import open as open_experiment


def add_parser(sub) -> None:
    p = sub.add_parser("paramedir", help="evaluate Paraver .cfg files on a trace, written as paramedir writes them",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("trace", metavar="TRACE", help=f"the trace: {readers.described()}")
    p.add_argument("cfgs", nargs="+", metavar="CFG [OUT]",
                   help="Paraver configuration files (.cfg), each optionally followed by its output's name")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="a file when there is one output and no OUT is given, else the folder of the outputs "
                        "(named as paramedir names them); default: stdout")
    p.add_argument("-tu", "--trace-units", action="store_true",
                   help="timelines in trace units instead of the cfg window's time units (paramedir -tu)")
    p.add_argument("-e", "--empty-columns", action="store_true", help="hide empty columns (paramedir -e)")
    p.add_argument("-p", "--print-plane", action="store_true",
                   help="only the selected plane of a 3D histogram (paramedir -p)")
    p.add_argument("-npr", "--no-preferences-precision", action="store_true",
                   help="10 decimals instead of the preferences' 2 (paramedir -npr)")
    p.add_argument("--all-histograms", action="store_true",
                   help="write every histogram of a cfg, not only the last one as paramedir: the k-th of n "
                        "(k < n) as <name>.<k>, the last one as <name>")
    add_cache_dir(p)


def cfg_outputs(items: list[str]) -> dict[str, str | None]:
    """paramedir's argument rule: each .cfg, and the name given right after it (None: none);
    a cfg given twice is one job (its last name). ValueError for a name following no cfg."""
    jobs: dict[str, str | None] = {}
    previous = None
    for item in items:
        if len(item) > 4 and item.endswith(".cfg"):       # CFGLoader::hasCFGExtension
            jobs[item] = None
            previous = item
        elif previous is not None:
            jobs[previous] = item
            previous = None
        else:
            raise ValueError(f"{item}: not a .cfg file and not the output name of the cfg before it")
    return jobs


@guarded
def run(args) -> int:
    try:
        jobs = cfg_outputs(args.cfgs)
    except ValueError as exc:
        return fail(str(exc))
    views, refused = [], False
    for cfg in sorted(jobs):                              # paramedir's std::map: by path
        try:
            views.append((cfg, read_cfg(cfg)))
        except CfgError as exc:
            print(f"popview: error: {exc}", file=sys.stderr)
            refused = True
        except OSError as exc:
            print(f"popview: error: {cfg}: {exc.strerror or exc}", file=sys.stderr)
            refused = True
    if not views:
        return 2
    outputs = []          # (cfg, file name, text)
    with open_experiment(args.trace, args.cache_dir, ProgressBar(args.trace)) as exp:
        if not exp.is_trace:
            return fail(f"{args.trace}: a profile has no timeline: cfg windows are evaluated on traces")
        try:
            trace = TraceColumns.from_cache(exp.reader, exp.definitions)
        except NotEvaluated as exc:
            return fail(f"{args.trace}: {exc}")
        rows = row_labels(exp.definitions)
        for cfg, view in views:
            name = jobs[cfg] or Path(cfg).name[:-4]
            outputs += _outputs(cfg, name, view, trace, rows, exp.definitions, args.all_histograms,
                                Options(args.trace_units, args.empty_columns, args.print_plane,
                                        10 if args.no_preferences_precision else PRECISION))
    written = _write(outputs, args.output, any(jobs.values()))
    if not written:
        print("popview: error: nothing of the given cfgs could be evaluated: nothing written", file=sys.stderr)
        return 2
    return 2 if refused else 0


def _outputs(cfg: str, name: str, view, trace, rows, definitions, every: bool,
             options: Options) -> list[tuple[str, str, str]]:
    cfg_name = Path(cfg).name
    if every and view.histograms:
        tables, skipped = evaluate_cfg(view, trace, rows, definitions, as_paramedir=True)
        for s in skipped:
            print(f"popview: {cfg_name}: histogram {s.name!r} not evaluated: {s.reason}", file=sys.stderr)
        last = view.histograms[-1].name
        out = []
        for k, table in enumerate(tables, 1):
            is_last = k == len(tables) and table.name == last and not any(s.name == last for s in skipped)
            out.append((cfg, name if is_last else f"{name}.{k}",
                        format_table(table, options.precision, options.only_plane)))
        return out
    job = paramedir_job(view, trace, definitions, rows, options)
    for s in job.skipped or ():
        what = "window" if job.timeline else "histogram"
        print(f"popview: {cfg_name}: {what} {s.name!r} not evaluated: {s.reason}", file=sys.stderr)
    if job.text is None:
        return []
    if job.timeline and ".csv" not in name:               # TextOutput::dumpWindow's rfind(".csv")
        name += ".csv"
    return [(cfg, name, job.text)]


def _write(outputs, output: str | None, named: bool) -> int:
    if not outputs:
        return 0
    if output is None and not named:
        for i, (cfg, name, text) in enumerate(outputs):
            if len(outputs) > 1:
                sys.stdout.write(f"{'' if i == 0 else chr(10)}# {Path(cfg).name}: {name}\n")
            sys.stdout.write(text)
        return len(outputs)
    if output is not None and len(outputs) == 1 and not named and not Path(output).is_dir():
        Path(output).write_text(outputs[0][2])
        return 1
    folder = Path(output) if output is not None else Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    for cfg, name, text in outputs:                    # in the cfgs' order: a later one replaces
        (folder / name).write_text(text)
    return len(outputs)
