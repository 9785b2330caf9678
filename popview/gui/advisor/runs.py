"""Which open runs belong together for scalabilities and the scaling view."""
from __future__ import annotations

from popview.analysis.report import series


def series_runs(state) -> list:
    """The current run's series (AppState.series), smallest first; runs opened
    outside any series are compared with each other."""
    name = state.series.get(state.current) if state.current is not None else None
    return series.ordered([e for e in state.experiments if state.series.get(e) == name])


def series_name(state) -> str | None:
    return state.series.get(state.current) if state.current is not None else None
