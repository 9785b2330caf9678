"""`popview report TRACE... -o report.html`: one self-contained HTML report."""
from __future__ import annotations

import os
import sys
from contextlib import ExitStack

from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.report import build_report, series, variants, write_report
from popview.commands.common import (add_cache_dir, add_dask, add_paths, add_reference, expand_runs, fail,
                                     find_reference, guarded, open_runs)
from popview.readers.files import is_regular
from popview.runs import series_groups


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="write an HTML report (metrics, scaling, warnings)")
    add_paths(p)
    p.add_argument("-o", "--output", required=True, metavar="HTML", help="where to write the report")
    p.add_argument("--focus", default="whole", type=Focus.parse,
                   help="whole | auto | callpath:PATH | window:T0:T1 (seconds) | iterations:PATH:I:J")
    p.add_argument("--variant", action="append", choices=list(variants.BY_KEY), metavar="NAME",
                   help=f"metric variant to include (repeatable; default: the one that fits the data "
                        f"plus computation-io): {', '.join(variants.BY_KEY)}")
    add_reference(p)
    p.add_argument("--scaling", "--mode", dest="mode", choices=series.MODES, default="auto",
                   help="strong or weak scaling (default auto: guessed from the instruction counts per "
                        "processing element; strong without them)")
    p.add_argument("--title", default="popview performance report", help="the report's heading")
    add_cache_dir(p)
    add_dask(p, "convert the runs and compute their metric inputs and replays, a task a run,")


@guarded
def run(args) -> int:
    if os.path.lexists(args.output) and not is_regular(args.output):
        # the report replaces its target: never a device, a pipe or a link to one
        return fail(f"{args.output}: exists and is not a regular file: the report is written to a new or regular file")
    with ExitStack() as stack:
        paths = expand_runs(args.paths, args.reference)
        exps = open_runs(stack, paths, args, args.focus)
        runs = series.ordered(exps)
        reference = find_reference(runs, args.reference) if args.reference else 0
        if not args.reference and len(groups := series_groups(runs)) > 1:
            sys.stderr.write(f"popview: warning: the runs form {len(groups)} series by their names, which differ in "
                             f"more than their size ({', '.join(name for name, _ in groups)}); the report takes "
                             "them as one, against the smallest run: give one series' runs for a report of "
                             "each (popview metrics shows them apart)\n")
        try:
            html_text = build_report(runs, args.focus, args.variant, None, reference, args.mode, args.title,
                                     bookmarks_note="None: bookmarks and pictures of their views come with "
                                                    "File > Export report in the window.")
        except FocusError as exc:            # e.g. a call path the run does not have
            return fail(str(exc))
    try:
        out = write_report(args.output, html_text)
    except OSError as exc:                  # it names its temporary file: name the report
        raise OSError(exc.errno, exc.strerror, args.output) from None
    print(f"wrote {out}")
    return 0
