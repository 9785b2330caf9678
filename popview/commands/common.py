"""Helpers shared by sub-commands: progress bar, error reporting."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from popview import readers
from popview.cache import location
from popview.cache.progress import Cancelled
from popview.readers.errors import InputError

LABEL_WIDTH = 40


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self, label: str):
        self.label = label
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and fraction < 1.0):
            return
        self._last = now
        width = 30
        done = int(width * fraction)
        sys.stderr.write(f"\r{shorten(self.label, LABEL_WIDTH):{LABEL_WIDTH}s} [{'#' * done}{'.' * (width - done)}] {fraction * 100:5.1f}% {message[:30]:30s}")
        if fraction >= 1.0:
            sys.stderr.write("\n")
        sys.stderr.flush()


def shorten(path: str, width: int) -> str:
    """`path` in `width` characters, its end (the file name) kept: '...traces/epoch_16proc.prv.gz'."""
    return path if len(path) <= width else "..." + path[-(width - 3):]


def fail(message: str) -> int:
    print(f"popview: error: {message}", file=sys.stderr)
    return 2


def guarded(fn):
    """Turn input errors into a one-line message and exit code 2 (every other failure is
    mapped by popview.cli.run_command)."""
    def wrapper(*a, **k):
        try:
            return fn(*a, **k)
        except InputError as exc:
            return fail(str(exc))
        except Cancelled:
            return fail("cancelled")
    return wrapper


class _CacheBeside(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        location.prefer_beside(True)
        setattr(namespace, self.dest, True)


def add_cache_dir(parser) -> None:
    parser.add_argument("--cache-dir", metavar="DIR", help="where to keep converted caches "
                        "(default: POPVIEW_CACHE_DIR if set, else the user cache directory)")
    parser.add_argument("--cache-beside", action=_CacheBeside, nargs=0, default=False,
                        help="keep caches beside the traces, in folders you own "
                             f"(also {location.BESIDE_ENV}=1)")


def add_paths(parser) -> None:
    parser.add_argument("paths", nargs="+", metavar="TRACE",
                        help=f"{readers.described()}, or a folder of runs (a series)")


def expand_runs(paths, reference: str | None = None) -> list[Path]:
    """The runs the paths stand for (a folder of runs is its runs, as in the window),
    the reference run first when it is a path not among them."""
    from popview.runs import runs_in

    runs = [run for path in paths for run, _series in runs_in(path)]
    if reference and Path(reference).exists() and Path(reference).resolve() not in {r.resolve() for r in runs}:
        runs[:0] = [run for run, _series in runs_in(reference)]
    return runs


def add_dask(parser, what: str) -> None:
    parser.add_argument("--dask", metavar="ADDRESS|local[:N]",
                        help=f"{what} on a Dask cluster: local (a worker a core), local:N (N workers) or a "
                             "scheduler's address such as tcp://host:8786; needs pip install 'popview[dask]' "
                             "and, on a cluster, a cache directory every worker shares (docs/dask.md)")


def dask_client(args):
    """A context giving the Dask client --dask names (None without --dask)."""
    from contextlib import nullcontext

    if not getattr(args, "dask", None):
        return nullcontext(None)
    from popview import cluster

    return cluster.connect(args.dask)      # its errors (ClusterError) are one line: popview.cli


def open_runs(stack, paths, args, focus=None, use_replay: bool = True) -> list:
    """The experiments of `paths`, entered into the ExitStack `stack`: opened here one after
    the other, or with --dask prepared one task a run on the Dask cluster (converted, their
    focus inputs and replay computed there: popview.analysis.distributed)."""
    if not getattr(args, "dask", None):
        from popview.experiment import open as open_experiment

        return [stack.enter_context(open_experiment(p, args.cache_dir, ProgressBar(str(p)))) for p in paths]
    from popview.analysis.distributed import open_runs as open_on_dask

    with dask_client(args) as client:
        exps = open_on_dask(paths, client, args.cache_dir, focus, use_replay,
                            ProgressBar(f"{len(paths)} runs on Dask"))
    return [stack.enter_context(exp) for exp in exps]


REFERENCE_HELP = ("the run the scalabilities are computed against: one of the runs, by its path or its "
                  "shape label such as 1x4 (default: the run with the fewest threads); a path that is "
                  "not among the runs is added to them")


def add_reference(parser) -> None:
    parser.add_argument("--reference", metavar="RUN", help=REFERENCE_HELP)


def find_reference(experiments, reference: str) -> int:
    """The index of the run `reference` names (a path or a shape label); InputError if none."""
    want = Path(reference).resolve() if Path(reference).exists() else None
    for i, exp in enumerate(experiments):
        if want is not None and Path(exp.source).resolve() == want:
            return i
    labels = [exp.label for exp in experiments]
    if reference in labels:
        return labels.index(reference)
    raise InputError(f"--reference {reference}: no run has that path or shape label "
                     f"(runs: {', '.join(labels)})")
