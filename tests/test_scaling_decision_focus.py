"""The strong / weak decision of a series is taken over the part of each run the series
compares: with a time-window focus, the iterations the window holds in every run (as the
Series gathers them), not the whole runs (the Advisor and the Scaling pane could disagree)."""
from __future__ import annotations

import popview
from popview.analysis.focus import Focus
from popview.analysis.metrics import series_scaling
from popview.testing import synthetic


def test_a_window_focus_decides_over_the_iterations_it_holds(tmp_path):
    paths = []
    for n, weights in ((2, (1.0, 1.0)), (4, (1.0, 1.0, 1.6, 1.6))):
        path = tmp_path / f"run_{n}.prv"
        synthetic.write(path, synthetic.Shape(processes=n, iterations=12, work_ns=2_000_000 * 2 // n,
                                              rank_weights=weights, init_ns=30_000_000, fini_ns=20_000_000))
        paths.append(path)
    exps = [popview.open(p, cache_dir=tmp_path / "cache") for p in paths]
    try:
        window = Focus.window(40_000_000, 50_000_000)
        kind, why = series_scaling(exps, window, exps[0])
        gathered = [set(e.__dict__.get("_focus_inputs", {})) for e in exps]
        series = popview.series(exps, focus=window)
        assert series.focus.kind == "iterations"          # the window carried as its iterations
        assert all(g == {series.focus} for g in gathered), gathered     # not the whole runs
        assert (kind, why) == (series.scaling, series.scaling_reason)
    finally:
        for e in exps:
            e.close()
