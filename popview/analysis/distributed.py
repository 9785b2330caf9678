"""A series at scale: its runs prepared on Dask workers, one task a run
(popview metrics / report --dask; docs/dask.md).

A task opens its run (converting it into the cache directory, which the
workers must share, when no valid cache is there) and computes what the
metrics of that run cost: its focus inputs and, for a trace, its replay on an
ideal network. The driver then opens each run from its cache and finds those
results where the metrics look for them (the experiment's focus inputs, the
replay's cache), so the Series, the report and their figures are the ones a
single machine computes; only where the work ran differs. A focus that a
series maps run by run (a time window, `auto`) is computed on the driver.
"""
from __future__ import annotations

import time
from pathlib import Path

from popview import cluster
from popview.cache.progress import Progress

PREPARED_FOCI = ("whole", "callpath", "iterations")


def open_runs(paths, client, cache_dir=None, focus=None, use_replay: bool = True, progress=None):
    """The experiments of `paths`, each prepared by a Dask task on `client`; their order kept."""
    import popview
    from popview.analysis.metrics import as_focus

    focus = as_focus(focus)
    prepared = focus if focus.kind in PREPARED_FOCI else None
    paths = [Path(p) for p in paths]
    tasks = [(prepare_run, (str(p), None if cache_dir is None else str(cache_dir), prepared, use_replay), 1.0)
             for p in paths]
    window = max(2 * cluster.workers(client), 4)
    progress = progress if isinstance(progress, Progress) else Progress(progress)
    experiments = []
    try:
        for path, (inputs, replayed, _seconds) in zip(
                paths, cluster.in_order(client, tasks, progress, window, "runs prepared on Dask", len(paths))):
            exp = popview.open(path, cache_dir)
            experiments.append(exp)
            if inputs is not None:
                exp.__dict__.setdefault("_focus_inputs", {})[prepared] = inputs
            if replayed is not None:
                from popview.analysis import replay

                replay.remember(exp, prepared, replayed)
    except BaseException:
        for exp in experiments:
            exp.close()
        raise
    return experiments


def prepare_run(path: str, cache_dir: str | None, focus, use_replay: bool):
    """A Dask task: the run opened (converted if need be), its focus inputs and replay
    computed. Returns (inputs, replay result, seconds); None for what does not apply."""
    import popview
    from popview.analysis.metrics import focus_inputs

    started = time.perf_counter()
    with popview.open(path, cache_dir) as exp:
        if focus is None:
            return None, None, time.perf_counter() - started
        inputs = focus_inputs(exp, focus)
        replayed = None
        if use_replay and exp.is_trace:
            from popview.analysis.replay import replay

            replayed = replay(exp, focus)
        return inputs, replayed, time.perf_counter() - started
