"""What `popview merge`, `popview mean` and `popview diff -o` share: opening the
runs, combining their profiles (popview.analysis.algebra) and writing the
result in the profile format the readers' registry writes (a Cube4 profile:
popview, Cube and pycubexr open it like any measured profile)."""
from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from popview.analysis import algebra
from popview.commands.common import ProgressBar, add_cache_dir, fail, guarded
from popview.experiment import open as open_experiment
from popview import readers
from popview.model.definitions import Definitions, Location, Process

COLLAPSE_HELP = ("runs with different numbers of locations: combine per process or as whole runs "
                 "(default none: refuse)")


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


def loc_process(exp) -> np.ndarray:
    return np.array([loc.process for loc in exp.definitions.locations], np.int64)


def combine(operation: str, experiments, collapse: str) -> algebra.AlgebraResult:
    """The algebra of the runs' profiles (AlgebraError when they cannot be aligned)."""
    profiles = [e.profile() for e in experiments]
    lp = [loc_process(e) for e in experiments] if collapse == "process" else None
    fn = {"merge": algebra.merge, "mean": algebra.mean}[operation]
    return fn(profiles, collapse=collapse, loc_process=lp)


def result_definitions(first, collapse: str) -> Definitions | None:
    """The system tree of the result: the first run's, one location per process of it when
    collapsed to processes, none (a flat list) when collapsed to the whole run."""
    d = first.definitions
    if d is None or collapse == "run":
        return None
    if collapse == "process":
        locs = [Location(p.name, i, 0) for i, p in enumerate(d.processes)]
        return Definitions(source_format="popview", nodes=list(d.nodes),
                           processes=[Process(p.name, p.node, p.appl, p.rank) for p in d.processes], locations=locs)
    return d


def export(path: str, result: algebra.AlgebraResult, experiments, collapse: str):
    names = [e.name for e in experiments]
    partial = int((~result.presence.all(axis=1)).sum()) if result.presence.size else 0
    attrs = {"popview::operation": result.operation, "popview::runs": " | ".join(names),
             "popview::callpaths_not_in_every_run": str(partial)}
    e = readers.profile_writer().export_profile(path, result.profile, result_definitions(experiments[0], collapse),
                                               attrs=attrs)
    e.notes[:0] = result.notes
    return e


def summary(e, result: algebra.AlgebraResult, experiments, fmt: str) -> str:
    partial = int((~result.presence.all(axis=1)).sum()) if result.presence.size else 0
    info = {"output": str(e.path), "operation": result.operation, "runs": [x.name for x in experiments],
            "metrics": e.metrics, "callpaths": e.n_callpaths, "callpaths_not_in_every_run": partial,
            "locations": e.n_locations, "system_tree": e.system_tree, "notes": e.notes}
    if fmt == "json":
        return json.dumps(info, indent=2) + "\n"
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
    p.add_argument("--format", default="table", choices=["table", "json"],
                   help="what was written, for people (table, default) or json")
    add_cache_dir(p)


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
                result = combine(operation, exps, args.collapse)
            except algebra.AlgebraError as exc:
                return fail(f"{' vs '.join(args.runs)}: {exc}")
            e = export(args.output, result, exps, args.collapse)
            text = summary(e, result, exps, args.format)
        sys.stdout.write(text)
        return 0

    return go()
