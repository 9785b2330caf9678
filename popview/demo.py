"""The demo experiment behind `popview --demo`.

A small hybrid MPI + OpenMP strong-scaling series (1x2, 2x2 and 4x2 ranks x
threads) written by popview's own synthetic trace writer into the user's
cache directory at first use, plus a session file that opens all three
runs with a focus of analysis (the main loop), a bookmark on a few
iterations of the largest run and two annotations, so every pane has
something to show.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from popview._version import __version__
from popview.analysis.focus import Focus
from popview.cache.location import user_cache_dir
from popview.session import Session, source_fingerprint
from popview.session.store import dumps, load, write_atomic
from popview.session.schema import SessionError

SESSION_NAME = "demo.popview"
SHAPES = ((1, 2), (2, 2), (4, 2))
LOOP = "main/timestep"


def demo_dir() -> Path:
    return user_cache_dir() / f"demo-{__version__}"


def _is_complete(directory: Path) -> bool:
    try:
        session = load(directory / SESSION_NAME)
    except SessionError:
        return False
    return len(session.experiments) == len(SHAPES) and all(Path(r.path).exists() for r in session.experiments)


def ensure_demo(directory: Path | None = None) -> Path:
    """The demo session file, writing the traces and the session first if needed."""
    directory = Path(directory) if directory else demo_dir()
    if _is_complete(directory):
        return directory / SESSION_NAME
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-", dir=directory.parent))
    try:
        _write(staging, directory)
        if directory.exists():
            shutil.rmtree(directory)
        staging.rename(directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory / SESSION_NAME


def _write(staging: Path, final: Path) -> None:
    """Traces under staging/series, and a session naming them at their final place."""
    from popview.testing.synthetic import write_scaling_series   # numba: only when generating

    runs = write_scaling_series(staging / "series", shapes=SHAPES, iterations=10)
    session = Session()
    refs = []
    for path, _expected in runs:
        final_path = final / "series" / path.name
        refs.append(session.add_experiment(final_path, source_fingerprint(path), label=path.stem.split("_")[-1]))
    largest, expected = refs[-1], runs[-1][1]
    loop = {"kind": "callpath", "callpath": LOOP}
    t0 = expected.loop_begin_ns + 3 * expected.iteration_ns
    t1 = expected.loop_begin_ns + 6 * expected.iteration_ns
    session.view = {"app": {"current": largest.id, "focus": loop, "metric": "time"}, "panes": {}}
    session.add_bookmark(
        "Iterations 4-6 of the 4x2 run",
        {"app": {"current": largest.id, "focus": Focus.window(t0, t1).to_dict(), "metric": "mpi",
                 "time_window": [t0, t1]}, "panes": {}},
        note="Three iterations of the largest run: rank 3 has 10 % more work than rank 0, so the others "
             "wait in MPI_Allreduce. Compare load balance in the Advisor with the whole loop.")
    session.add_annotation("time_range", "iteration 5", experiment=largest.id,
                           t0=expected.loop_begin_ns + 4 * expected.iteration_ns,
                           t1=expected.loop_begin_ns + 5 * expected.iteration_ns)
    session.add_annotation("experiment", "Reference run for the scaling figures", experiment=refs[0].id)
    write_atomic(staging / SESSION_NAME, dumps(session, final))     # paths relative to the final folder
