"""Which runs a path given by the user stands for: a trace, a profile, an OTF2
experiment, or a folder of them (a series), as the window and the commands
read it."""
from __future__ import annotations

import re
from pathlib import Path

from popview.readers import reader_for
from popview.readers.errors import InputError

SOURCE_SUFFIX = r"\.(prv(\.gz)?|otf2|cubex)$"


def _is_run(path: Path) -> bool:
    try:
        reader_for(path)
    except InputError:
        return False
    return True


def runs_in(path) -> list[tuple[Path, str | None]]:
    """The runs a dropped path stands for, each with its series name.

    A trace, profile or OTF2 directory is one run (no series), and so is a folder
    holding one run (Extrae's run folders: hyb_1x2/ with its .prv, .pcf, .row): runs
    dropped that way form a series by their names, as loose files do; any other
    folder is a series named after it, holding every run directly inside or alone in a
    folder inside (extrae/ holding hyb_1x1/, hyb_1x2/, hyb_2x2/)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if _is_run(path):
        return [(path, None)]
    if not path.is_dir():
        reader_for(path)                      # raises the reader's message
    runs = [run for child in sorted(path.iterdir(), key=natural_key) if (run := _run_of(child)) is not None]
    if not runs:
        raise InputError(f"{path}: no trace or profile in this folder, nor in a folder of one run inside it")
    if len(runs) == 1:
        return [(runs[0], None)]
    return [(run, path.name) for run in runs]


def _run_of(child: Path) -> Path | None:
    """A run directly inside a folder: a trace, a profile, an OTF2 experiment, or a folder
    holding one run (Extrae writes each run into its own: extrae/hyb_1x1/hyb_1x1.prv, ...)."""
    if _is_run(child):
        return child
    if child.is_dir():
        try:
            inside = [c for c in child.iterdir() if _is_run(c)]
        except OSError:
            return None
        if len(inside) == 1:
            return inside[0]
    return None


def natural_key(path: Path) -> list:
    """'run_2' before 'run_10'."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", Path(path).name)]


def series_name(paths) -> str | None:
    """A common name for runs whose names differ only in numbers
    ('epoch_16proc.prv', 'epoch_32proc.prv' -> 'epoch_Nproc'). Runs with the
    same file name (profile.cubex, traces.otf2) are named by their folders."""
    paths = [Path(p) for p in paths]
    names = [re.sub(SOURCE_SUFFIX, "", p.name) for p in paths]
    if len(set(names)) == 1:
        names = [p.parent.name for p in paths]
    patterns = {re.sub(r"\d+", "N", n) for n in names}
    if len(paths) > 1 and len(set(names)) == len(names) and len(patterns) == 1:
        return patterns.pop()
    return None


def run_key(exp) -> tuple:
    """(folder, shape): a trace and a profile with the same key are two views of one run
    (Score-P writes traces.otf2 and profile.cubex of a run into one folder)."""
    source = getattr(exp, "source", None)
    if source is not None:
        path = Path(source).resolve()
        folder = str(path if path.is_dir() else path.parent)      # an experiment folder given as the run
    else:
        folder = id(exp)
    try:
        shape = exp.shape()
    except Exception:  # noqa: BLE001 - a run whose shape is unknown is its own run
        shape = id(exp)
    return folder, shape


def view_kind(exp) -> str:
    return "trace" if getattr(exp, "is_trace", False) else "profile"


def same_run(a, b) -> bool:
    """A trace and a profile of one run (never each other's reference)."""
    return a is not b and view_kind(a) != view_kind(b) and run_key(a) == run_key(b)


def series_groups(exps) -> list[tuple[str | None, list]]:
    """The series among runs given together, each (its name pattern, its runs in the given order):
    runs whose names differ in more than their size (a number that is their process, thread or
    processing-element count) are apart when that leaves some group with runs of several sizes.
    tum-pos-gccg/pent holds scorep-pent-classical-{4,8,64} and scorep-pent-metis-{4,8,64}: taken as
    one series, the classical 4-rank run was the metis runs' reference too. Runs of one size that
    differ by name (prime_v0, v1, v2: code versions) stay one comparison: [(None, exps)]."""
    def key(e) -> str:
        p, t = e.shape()
        sizes = {str(p), str(t), str(p * t)}
        return re.sub(r"\d+", lambda m: "N" if m.group(0).lstrip("0") in sizes or m.group(0) in sizes
                      else m.group(0), e.name)

    groups: dict[str, list] = {}
    for e in exps:
        groups.setdefault(key(e), []).append(e)
    if len(groups) < 2 or not any(len({e.shape() for e in g}) > 1 for g in groups.values()):
        return [(None, list(exps))]
    return list(groups.items())
