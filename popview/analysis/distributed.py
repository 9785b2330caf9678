"""A series at scale: its runs prepared on Dask workers, one task a run
(popview metrics / report --dask; docs/dask.md).

A task opens its run (converting it into the cache directory, which the
workers must share, when no valid cache is there) and computes what the
metrics of that run cost: its focus inputs and, for a trace, its replay on an
ideal network. The driver then opens each run from its cache and finds those
results where the metrics look for them (the experiment's focus inputs, the
replay's cache), so the Series, the report and their figures are the ones a
single machine computes; only where the work ran differs. The `auto` focus
is resolved on the worker (autofocus: the focus it stands for in that run),
whose inputs and replay are computed there too; when the runs propose
different foci, the one the series takes for all (focus_map.common_focus) is
prepared by one more task on each run that lacks it. A time window, which a series
carries to the other runs as the iterations it holds in the first run, is
mapped by one task on the first run; the iterations are then prepared on
every run's worker like any other focus.
"""
from __future__ import annotations

import time
from pathlib import Path

from popview import cluster
from popview.cache.progress import Progress

PREPARED_FOCI = ("whole", "callpath", "iterations", "auto")


def open_runs(paths, client, cache_dir=None, focus=None, use_replay: bool = True, progress=None):
    """The experiments of `paths`, each prepared by a Dask task on `client`; their order kept."""
    import popview
    from popview.analysis.metrics import as_focus

    focus = as_focus(focus)
    paths = [Path(p) for p in paths]
    progress = progress if isinstance(progress, Progress) else Progress(progress)
    held = None
    if focus.kind == "window" and len(paths) > 1:
        held = _window_on_first_run(paths[0], client, cache_dir, focus, progress)
    prepared = held if held is not None else (focus if focus.kind in PREPARED_FOCI else None)
    tasks = [(prepare_run, (str(p), None if cache_dir is None else str(cache_dir), prepared, use_replay), 1.0)
             for p in paths]
    window = max(2 * cluster.workers(client), 4)
    experiments = []
    try:
        for path, got in zip(paths, cluster.in_order(client, tasks, progress, window, "runs prepared on Dask",
                                                     len(paths))):
            exp = popview.open(path, cache_dir)
            experiments.append(exp)
            if held is not None and not experiments[1:]:     # the series maps the window on the first run
                from popview.analysis.focus_map import remember_window
                remember_window(exp, focus, held)
            exp.__dict__.setdefault("_focus_inputs", {}).update(got["inputs"])
            if got["auto"] is not None:               # the focus this run's `auto` stands for
                exp.__dict__["_auto_focus"] = [got["auto"]]
            if got["replayed"] is not None:
                from popview.analysis import replay

                replay.remember(exp, got["replay_focus"], got["replayed"])
        if prepared is not None and prepared.kind == "auto":
            _reference_foci(experiments, paths, client, cache_dir, prepared, use_replay, progress)
            _common_auto_focus(experiments, paths, client, cache_dir, use_replay, progress)
    except BaseException:
        for exp in experiments:
            exp.close()
        raise
    return experiments


def _window_on_first_run(path: Path, client, cache_dir, focus, progress: Progress):
    """The iterations the time window `focus` holds in the first run (as Series carries a
    window to the other runs), found by a task on that run; None when it holds none (the
    driver then says why, as on one machine)."""
    tasks = [(map_window, (str(path), None if cache_dir is None else str(cache_dir), focus), 1.0)]
    for held in cluster.in_order(client, tasks, progress, 1, "time window mapped on Dask", 1):
        return held
    return None


def map_window(path: str, cache_dir: str | None, focus):
    """A Dask task: the iterations focus equivalent to the window `focus` of the run."""
    import popview
    from popview.analysis.focus_map import window_iterations

    with popview.open(path, cache_dir) as exp:
        return window_iterations(exp, focus)


def _reference_foci(experiments, paths, client, cache_dir, focus, use_replay: bool, progress: Progress) -> None:
    """With the `auto` focus each run's metrics read the reference run (by default the one
    with the fewest threads, as Series chooses it) at the focus that run's automatic focus
    maps to there: those inputs and replays computed by one more task on the reference."""
    from popview.analysis.metrics import reference_focus

    if len(experiments) < 2:
        return
    n = [e.__dict__["_focus_inputs"][focus].n_threads for e in experiments]
    i = n.index(min(n))
    ref = experiments[i]
    have = ref.__dict__["_focus_inputs"]
    wanted = []
    for exp in experiments:
        if exp is not ref:
            mapped = reference_focus(exp.__dict__["_auto_focus"][0][0], ref)
            if mapped not in have and mapped not in wanted:
                wanted.append(mapped)
    if not wanted:
        return
    tasks = [(prepare_foci, (str(paths[i]), None if cache_dir is None else str(cache_dir), wanted, use_replay), 1.0)]
    for got in cluster.in_order(client, tasks, progress, 1, "reference run prepared on Dask", 1):
        have.update(got["inputs"])
        from popview.analysis import replay

        for f, result in got["replays"].items():
            replay.remember(ref, f, result)


def _common_auto_focus(experiments, paths, client, cache_dir, use_replay: bool, progress: Progress) -> None:
    """A series analyses every run over one automatic focus (focus_map.common_focus: the first
    run's proposal that every run has): its inputs and replays prepared by a task on each run
    whose own proposal differs."""
    from popview.analysis.focus import Focus
    from popview.analysis.focus_map import common_focus

    if len(experiments) < 2:
        return
    common, _ = common_focus(experiments, Focus("auto"))
    if common.kind == "auto":
        return
    todo = [i for i, e in enumerate(experiments) if common not in e.__dict__["_focus_inputs"]]
    tasks = [(prepare_foci, (str(paths[i]), None if cache_dir is None else str(cache_dir), [common], use_replay), 1.0)
             for i in todo]
    for i, got in zip(todo, cluster.in_order(client, tasks, progress, max(2 * cluster.workers(client), 4),
                                             "common automatic focus prepared on Dask", len(todo))):
        experiments[i].__dict__["_focus_inputs"].update(got["inputs"])
        from popview.analysis import replay

        for f, result in got["replays"].items():
            replay.remember(experiments[i], f, result)


def prepare_foci(path: str, cache_dir: str | None, foci: list, use_replay: bool) -> dict:
    """A Dask task: the inputs (and replays, for a trace) of a run for several foci."""
    import popview
    from popview.analysis.metrics import focus_inputs

    out = {"inputs": {}, "replays": {}}
    with popview.open(path, cache_dir) as exp:
        for focus in foci:
            out["inputs"][focus] = focus_inputs(exp, focus)
            if use_replay and exp.is_trace:
                from popview.analysis.replay import replay

                out["replays"][focus] = replay(exp, focus)
    return out


def prepare_run(path: str, cache_dir: str | None, focus, use_replay: bool) -> dict:
    """A Dask task: the run opened (converted if need be), its focus inputs and replay
    computed; for the `auto` focus, the focus it stands for in this run (autofocus) and
    that focus's inputs and replay too, which the metrics then use. Returns {"inputs":
    {focus: inputs}, "auto": (focus, why) or None, "replayed": result or None,
    "replay_focus", "seconds"}."""
    import popview
    from popview.analysis.metrics import focus_inputs, propose_focus

    started = time.perf_counter()
    out = {"inputs": {}, "auto": None, "replayed": None, "replay_focus": None}
    with popview.open(path, cache_dir) as exp:
        if focus is not None:
            out["inputs"][focus] = focus_inputs(exp, focus)
            target = focus
            if focus.kind == "auto":
                out["auto"] = propose_focus(exp)
                target = out["auto"][0]
                out["inputs"][target] = focus_inputs(exp, target)
            if use_replay and exp.is_trace:
                from popview.analysis.replay import replay

                out["replayed"], out["replay_focus"] = replay(exp, target), target
    out["seconds"] = time.perf_counter() - started
    return out
