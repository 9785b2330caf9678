"""The window's series of a folder holding several (tum-pos-gccg/pent: classical and metis
runs): the Advisor and the Scaling pane compared a metis run with the classical 4-rank run;
now with the runs of its own series, and the pane's status names it."""
from __future__ import annotations

from types import SimpleNamespace

from popview.gui.advisor.runs import series_name, series_runs


class _Run(SimpleNamespace):
    __hash__ = object.__hash__          # AppState.series is keyed by the experiments
    __eq__ = object.__eq__


def _run(name, p):
    return _Run(name=name, shape=lambda: (p, 1), is_trace=False, source=f"/x/{name}/profile.cubex")


def test_a_folder_of_two_series_keeps_the_current_run_s():
    runs = [_run(f"pent-{part}-{p}", p) for part in ("classical", "metis") for p in (4, 8, 64)]
    metis8 = runs[4]
    state = SimpleNamespace(current=metis8, experiments=runs, series={e: "pent" for e in runs})
    assert [e.name for e in series_runs(state)] == ["pent-metis-4", "pent-metis-8", "pent-metis-64"]
    assert series_name(state) == "pent: pent-metis-N, one of 2 series in the folder"
    state.current = runs[0]
    assert [e.name for e in series_runs(state)] == ["pent-classical-4", "pent-classical-8", "pent-classical-64"]


def test_one_series_is_kept_whole():
    runs = [_run(f"epoch_{p}proc", p) for p in (1, 2, 4)]
    state = SimpleNamespace(current=runs[1], experiments=runs, series={e: "epoch" for e in runs})
    assert series_runs(state) == runs and series_name(state) == "epoch"
