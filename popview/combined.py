"""Runs combined into one profile (popview.analysis.algebra) and written in the
profile format the readers' registry writes (a Cube4 .cubex that popview, Cube
and pycubexr open like a measured profile). Shared by `popview diff -o`,
`popview merge`, `popview mean` and the window's File > Compare runs.

The file says what it is the result of (popview:: attributes: operation, run
names, source paths, collapse); the reader gives that back as
`definitions.flags["algebra"]`, and popview.analysis.algebra_meaning decides
which metrics the result keeps meaningful.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from popview import readers
from popview.analysis import algebra
from popview.model.definitions import Definitions, Location, Process

OPERATIONS = {"difference": lambda profiles, **kw: algebra.difference(profiles[0], profiles[1], **kw),
              "mean": algebra.mean, "merge": algebra.merge}


def loc_process(exp) -> np.ndarray:
    return np.array([loc.process for loc in exp.definitions.locations], np.int64)


def combine(operation: str, experiments, collapse: str = "none") -> algebra.AlgebraResult:
    """The algebra of the runs' profiles (AlgebraError when they cannot be aligned)."""
    if operation == "difference" and len(experiments) != 2:
        raise algebra.AlgebraError(f"a difference takes two runs (got {len(experiments)})")
    profiles = [e.profile() for e in experiments]
    lp = [loc_process(e) for e in experiments] if collapse == "process" else None
    return OPERATIONS[operation](profiles, collapse=collapse, loc_process=lp)


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


def not_in_every_run(result: algebra.AlgebraResult) -> int:
    return int((~result.presence.all(axis=1)).sum()) if result.presence.size else 0


def export(path, result: algebra.AlgebraResult, experiments, collapse: str):
    """Write the result; returns the writer's Export summary (with the algebra's notes first)."""
    attrs = {"popview::operation": result.operation, "popview::runs": " | ".join(e.name for e in experiments),
             "popview::sources": json.dumps([str(Path(e.source).resolve()) for e in experiments]),
             "popview::collapse": collapse,
             "popview::callpaths_not_in_every_run": str(not_in_every_run(result))}
    e = readers.profile_writer().export_profile(path, result.profile, result_definitions(experiments[0], collapse),
                                               attrs=attrs)
    e.notes[:0] = result.notes
    return e


def default_name(operation: str, experiments) -> str:
    """A file name for a result: difference_A-B.cubex, mean_of_3_runs_A.cubex..."""
    suffix = readers.profile_writer().FORMAT.profile_suffix
    names = [e.name for e in experiments]
    stem = (f"difference_{names[0]}-{names[1]}" if operation == "difference"
            else f"{operation}_of_{len(names)}_runs_{names[0]}")
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:150] + suffix


def write_result(operation: str, experiments, folder, collapse: str = "none") -> Path:
    """Combine the runs and write the result into `folder` under a name of its own
    (a number is added rather than overwrite another result); returns the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    result = combine(operation, experiments, collapse)
    name = default_name(operation, experiments)
    suffix = readers.profile_writer().FORMAT.profile_suffix
    path, n = folder / name, 1
    while path.exists():
        n += 1
        path = folder / f"{name[:-len(suffix)]}_{n}{suffix}"
    export(path, result, experiments, collapse)
    return path
