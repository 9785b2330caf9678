"""What `popview merge`, `popview mean` and `popview diff -o` share: opening the
runs, combining their profiles and writing the result (popview.combined), then
the POP metrics of the result as `popview metrics` gives them (table, JSON or
CSV; popview.analysis.algebra_meaning says which metrics the algebra keeps)."""
from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path

from popview import combined, readers
from popview.analysis import algebra
from popview.analysis.models import MODEL_IDS
from popview.analysis.series import Series
from popview.commands import metrics as metrics_command
from popview.commands.common import ProgressBar, add_cache_dir, fail, guarded
from popview.experiment import open as open_experiment

COLLAPSE_HELP = ("runs with different numbers of locations: combine per process or as whole runs "
                 "(default none: refuse)")
MODEL_HELP = "metric model of the result's metrics, as for `popview metrics` (default auto)"


def refusal(runs, exc, collapse: str) -> str:
    """A refusal of the algebra with the option that gets past it (the window names its menu)."""
    text = f"{' vs '.join(map(str, runs))}: {exc}"
    if "collapse" in str(exc):
        text += " (--collapse run)" if collapse == "process" else " (--collapse process or --collapse run)"
    return text


def add_output(parser, required: bool, what: str) -> None:
    fmt = readers.profile_writer().FORMAT
    parser.add_argument("-o", "--output", metavar=f"OUT{fmt.profile_suffix}", required=required,
                        help=f"write {what} here as a {fmt.label} ({fmt.profile_suffix}) that popview opens "
                             "like a measured one")


def check_output(path: str | None) -> str | None:
    """The reason an output path cannot be written, or None."""
    if path is None:
        return None
    out = Path(path)
    suffix = readers.profile_writer().FORMAT.profile_suffix
    if not out.name.endswith(suffix):
        return f"{path}: the output must end in {suffix} (profiles are recognised by it)"
    if not out.parent.resolve().is_dir():
        return f"{path}: folder {out.parent} does not exist"
    if out.is_dir():
        return f"{path}: is a folder"
    return None


loc_process = combined.loc_process
export = combined.export


def written(e, result: algebra.AlgebraResult, experiments) -> dict:
    """What was written, for the JSON output."""
    return {"output": str(e.path), "operation": result.operation, "runs": [x.name for x in experiments],
            "metrics": e.metrics, "callpaths": e.n_callpaths,
            "callpaths_not_in_every_run": combined.not_in_every_run(result),
            "locations": e.n_locations, "system_tree": e.system_tree, "notes": e.notes}


def summary(e, result: algebra.AlgebraResult, experiments, fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps(written(e, result, experiments), indent=2) + "\n"
    partial = combined.not_in_every_run(result)
    lines = [f"wrote {e.path}: {result.operation} of {len(experiments)} runs, {len(e.metrics)} metrics, "
             f"{e.n_callpaths} call paths ({partial} not in every run), {e.n_locations} locations "
             f"({'system tree of the first run' if e.system_tree == 'definitions' else 'flat system tree'})"]
    lines += [f"  note: {n}" for n in e.notes]
    return "\n".join(lines) + "\n"


def add_parser(sub, operation: str, help_text: str, runs_help: str) -> None:
    p = sub.add_parser(operation, help=help_text)
    p.add_argument("runs", nargs="+", metavar="RUN", help=runs_help)
    add_output(p, True, f"the {operation}")
    p.add_argument("--collapse", default="none", choices=["none", "process", "run"], help=COLLAPSE_HELP)
    p.add_argument("--model", default="auto", choices=["auto", *MODEL_IDS, "all"], help=MODEL_HELP)
    p.add_argument("--format", default="table", choices=["table", "json", "csv"],
                   help="the result's POP metrics as `popview metrics` writes them: table (default, after a "
                        "line saying what was written), json (with what was written under \"written\") or "
                        "csv (what was written goes to standard error)")
    add_cache_dir(p)


def result_metrics(path, cache_dir, model: str, fmt: str, written_doc: dict, written_text: str) -> str:
    """The POP metrics of the written result, in `popview metrics`' output."""
    with open_experiment(path, cache_dir) as r:
        s = Series([r])
        models, why = metrics_command.pick_models(s, model)
        if fmt == "json":
            return json.dumps({"written": written_doc, **metrics_command.metrics_doc(s, models, why)}, indent=1) + "\n"
        text = metrics_command.RENDER[fmt](s, models, why)
    if fmt == "csv":
        sys.stderr.write(written_text)
        return text
    return written_text + "\n" + text


def run(args, operation: str) -> int:
    @guarded
    def go() -> int:
        if len(args.runs) < 2:
            return fail(f"{operation} needs at least two runs (got {len(args.runs)})")
        problem = check_output(args.output)
        if problem:
            return fail(problem)
        with ExitStack() as stack:
            exps = [stack.enter_context(open_experiment(r, args.cache_dir, ProgressBar(r))) for r in args.runs]
            try:
                result = combined.combine(operation, exps, args.collapse)
            except algebra.AlgebraError as exc:
                return fail(refusal(args.runs, exc, args.collapse))
            e = export(args.output, result, exps, args.collapse)
            doc, text = written(e, result, exps), summary(e, result, exps)
        sys.stdout.write(result_metrics(args.output, args.cache_dir, args.model, args.format, doc, text))
        return 0

    return go()
