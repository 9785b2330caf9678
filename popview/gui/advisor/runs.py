"""Which open runs belong together for scalabilities and the scaling view."""
from __future__ import annotations

import re

from popview.analysis.report import series
from popview.runs import run_key, series_groups


def series_runs(state) -> list:
    """The current run's series (AppState.series), smallest first. Runs opened outside
    any series are compared with the other such runs named like the current one but for
    numbers (epoch_4proc, epoch_16proc): two unrelated traces opened together are not
    each other's reference."""
    current = state.current
    name = state.series.get(current) if current is not None else None
    runs = [e for e in state.experiments if state.series.get(e) == name]
    if name is None and current is not None:
        runs = [e for e in runs if e is current or _same_program(e.name, current.name)]
    return _own_group(series.ordered(_one_view_per_run(runs, current)), current)[0]


def _own_group(runs: list, current) -> tuple[list, str | None, int]:
    """The runs of the current run's series when a folder holds several (names that differ in more
    than their size: tum-pos-gccg/pent's classical and metis runs, popview.runs.series_groups), that
    series' name pattern and the number of series; else the runs as given, None and 1."""
    if current is None or len(runs) < 2:
        return runs, None, 1
    groups = series_groups(runs)
    if len(groups) < 2:
        return runs, None, 1
    return next(((g, pattern, len(groups)) for pattern, g in groups if any(e is current for e in g)),
                (runs, None, 1))


def _one_view_per_run(runs: list, current) -> list:
    """A Score-P trace and the profile written beside it (same folder, same shape) are two
    views of one run, not two runs: keep the view of the kind of the current run (a profile is
    compared with profiles, as `popview metrics` compares them), else the trace."""
    traces = {run_key(e): e for e in runs if getattr(e, "is_trace", False)}
    profiles = {run_key(e): e for e in runs if not getattr(e, "is_trace", False)}
    twins = traces.keys() & profiles.keys()
    keep_profiles = current is not None and not getattr(current, "is_trace", False)
    dropped = {id(traces[k]) if keep_profiles else id(profiles[k]) for k in twins}
    return [e for e in runs if id(e) not in dropped]


def series_name(state) -> str | None:
    """The current run's series as opened (its folder), and which of the series in it when the
    folder holds several ('pent: scorep-pent-metis-N, one of 2 series in the folder')."""
    name = state.series.get(state.current) if state.current is not None else None
    if name is None:
        return None
    runs = series.ordered(_one_view_per_run([e for e in state.experiments if state.series.get(e) == name],
                                            state.current))
    _, pattern, n_series = _own_group(runs, state.current)
    if pattern is None:
        return name
    return f"{name}: {pattern}, one of {n_series} series in the folder"


def _same_program(a: str, b: str) -> bool:
    """Names alike once their numbers are set aside: runs of one program at several sizes."""
    return re.sub(r"\d+", "N", a) == re.sub(r"\d+", "N", b)
