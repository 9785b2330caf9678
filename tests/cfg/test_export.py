"""A popview timeline view saved as a Paraver cfg: written as Paraver writes windows, read back
into the same description, and evaluated into the same values popview draws."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.cfg import parse_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
from popview.analysis.cfg.export import NotExportable, initial_window, timeline_cfg
from popview.analysis.cfg.timeline import shown_windows, window_timeline
from popview.analysis.cfg.writer import write_cfg
from popview.analysis.timeline_data import ColourMode, TimelineData
from popview.testing import synthetic


@pytest.fixture(scope="module")
def exp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    trace = tmp / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=3, iterations=4, rank_weights=(1.0, 1.4, 0.6)))
    e = popview.open(trace, cache_dir=tmp / "cache")
    yield e
    e.close()


def _modes(exp):
    return {m.kind: m for m in TimelineData(exp).modes()}


@pytest.mark.parametrize("kind", ["state", "mpi", "useful", "ipc", "counter"])
def test_each_colour_mode_is_written_as_paraver_writes_windows_and_reads_back(exp, kind):
    mode = _modes(exp)[kind]
    t_end = int(exp.definitions.t_end)
    view = timeline_cfg(exp.definitions, mode, t_end // 4, t_end // 2, 0.0, 2.0)
    text = write_cfg(view)
    assert text.startswith("#ParaverCFG\nConfigFile.Version: 3.4\n")
    assert text.count("window_compose_functions { 9, {") == len(view.windows)
    for window in view.windows:
        assert f"< NEW DISPLAYING WINDOW {window.name} >" in text
        if window.derived:
            assert "window_selected_functions { 5, { {appl, Adding}" in text and ", } }" in text
        else:
            assert "window_selected_functions { 14, { {cpu, Active Thd}, {appl, Adding}" in text
    for line in text.splitlines():          # event types are whole numbers, as Paraver's loader reads them
        if line.startswith("window_filter_module evt_type "):
            assert all(t.isdigit() for t in line.split()[2:])
    back = parse_cfg(text, "saved.cfg")
    assert back == view                               # the same view description
    shown = shown_windows(back)
    assert [w.name for w in shown] == [view.windows[-1].name]
    assert initial_window(shown[0], t_end) == (t_end // 4, t_end // 2)
    trace = TraceColumns.from_cache(exp.reader, exp.definitions)
    timeline = window_timeline(back, shown[0], evaluate_window(back, shown[0].position, trace), trace.t_end)
    assert timeline.colouring.code == mode.categorical
    if not mode.categorical:
        assert (timeline.colouring.low, timeline.colouring.high, timeline.colouring.from_cfg) == (0.0, 2.0, True)


@pytest.mark.parametrize("kind", ["state", "ipc", "useful"])
def test_the_saved_window_draws_what_popview_draws_zoomed_in(exp, kind):
    """Zoomed in (pixels far shorter than the intervals) Paraver's window and popview's colour
    mode agree pixel by pixel, but at the pixels cut by an interval's edge."""
    mode = _modes(exp)[kind]
    data = TimelineData(exp)
    t_end = int(exp.definitions.t_end)
    t0, t1, width = t_end // 3, t_end // 3 + t_end // 50, 2000
    rows = np.arange(len(exp.definitions.locations))
    ours = data.picture(mode, rows, t0, t1, width).values.astype(np.float64)
    view = timeline_cfg(exp.definitions, mode, t0, t1, 0.0, 2.0)
    trace = TraceColumns.from_cache(exp.reader, exp.definitions)
    window = shown_windows(view)[0]
    timeline = window_timeline(view, window, evaluate_window(view, window.position, trace), trace.t_end)
    theirs, source = timeline.picture(rows, t0, t1, width)
    assert source == "records"
    if kind == "useful":          # popview: the longest useful burst; Paraver: each burst's duration, 0 outside
        theirs = np.where(theirs > 0, theirs, np.nan)
    both = np.isfinite(ours) & np.isfinite(theirs)
    assert both.mean() > 0.9
    agree = np.isclose(ours[both], theirs[both], rtol=1e-6)
    assert agree.mean() > 0.97, agree.mean()


def test_call_path_colours_have_no_paraver_window(exp):
    mode = ColourMode("callpath", 1, label="Call path (depth 1)")
    with pytest.raises(NotExportable, match="call-path"):
        timeline_cfg(exp.definitions, mode, 0, 10)
    with pytest.raises(NotExportable, match="range"):
        timeline_cfg(exp.definitions, _modes(exp)["ipc"], 0, 10)
