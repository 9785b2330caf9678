"""The collection's generic timeline cfgs drawn by popview agree with popview's own colour modes
on a real trace (EPOCH, 4 ranks): states, MPI calls (by name), useful duration, IPC."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.cfg import read_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
from popview.analysis.cfg.paramedir import value_names
from popview.analysis.cfg.timeline import shown_windows, window_timeline
from popview.analysis.timeline_data import TimelineData

TRACE = "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz"
CFGS = "paraver-cfgs/parami/cfgs"


@pytest.fixture(scope="module")
def epoch(shared_traces, tmp_path_factory):
    with popview.open(shared_traces / TRACE, cache_dir=tmp_path_factory.mktemp("cache")) as exp:
        yield exp, TraceColumns.from_cache(exp.reader, exp.definitions)


def _pictures(shared_traces, epoch, cfg, kind, t0, t1, width=3000):
    exp, trace = epoch
    view = read_cfg(shared_traces / CFGS / cfg)
    window = shown_windows(view)[-1]
    timeline = window_timeline(view, window, evaluate_window(view, window.position, trace), trace.t_end,
                               value_names(window, exp.definitions), exp.definitions)
    rows = np.arange(trace.n_rows)
    theirs, _ = timeline.picture(rows, t0, t1, width)
    data = TimelineData(exp)
    mode = next(m for m in data.modes() if m.kind == kind)
    ours = data.picture(mode, rows, t0, t1, width)
    return timeline, theirs, ours, data, mode


def _window(epoch, fraction=0.5, span=20_000_000):
    t = int(epoch[1].t_end * fraction)
    return t, t + span


def test_state_as_is_is_popview_s_state_colours(shared_traces, epoch):
    timeline, theirs, ours, _, _ = _pictures(shared_traces, epoch, "General/views/state_as_is.cfg", "state",
                                             0, epoch[1].t_end, 40_000)
    shown = (ours.values >= 0) & np.isfinite(theirs) & (ours.share > 0.99)     # pixels inside one state
    assert shown.mean() > 0.9 and len(np.unique(theirs[shown])) >= 3       # running and MPI states
    assert (theirs[shown] == ours.values[shown]).mean() > 0.999


def test_mpi_call_names_are_popview_s_mpi_calls(shared_traces, epoch):
    timeline, theirs, ours, data, mode = _pictures(shared_traces, epoch, "mpi/views/MPI_call.cfg", "mpi",
                                                   0, epoch[1].t_end, 40_000)
    inside = (ours.values >= 0) & (ours.share > 0.99) & np.isfinite(theirs) & (theirs > 0)
    assert inside.sum() > 100 and len(np.unique(theirs[inside])) >= 3
    names = {timeline.label(v) for v in np.unique(theirs[inside])}
    assert names <= {data.category_label(mode, int(v)) for v in np.unique(ours.values[inside])}
    agree = [timeline.label(a) == data.category_label(mode, int(b)) for a, b in zip(theirs[inside], ours.values[inside])]
    assert np.mean(agree) > 0.99
    outside = (ours.values < 0) & np.isfinite(theirs)          # popview: no MPI call; Paraver: End (0)
    assert (theirs[outside] == 0).mean() > 0.99


def test_useful_duration_is_popview_s_longest_useful_burst(shared_traces, epoch):
    exp, trace = epoch
    timeline, theirs, ours, _, _ = _pictures(shared_traces, epoch, "General/views/useful_duration.cfg", "useful",
                                             0, trace.t_end, 1500)
    unit_ns = 1e3                                      # the cfg's window_units: Microseconds
    both = np.isfinite(ours.values) & np.isfinite(theirs) & (theirs > 0)
    assert both.mean() > 0.5
    np.testing.assert_allclose(theirs[both] * unit_ns, ours.values[both], rtol=1e-9)


def test_ipc_zoomed_in_is_popview_s_ipc(shared_traces, epoch):
    t0, t1 = _window(epoch, 0.6, 5_000_000)
    _, theirs, ours, _, _ = _pictures(shared_traces, epoch, "counters_PAPI/performance/IPC.cfg", "ipc", t0, t1)
    both = np.isfinite(ours.values) & np.isfinite(theirs) & (theirs > 0)
    assert both.mean() > 0.5
    assert np.isclose(theirs[both], ours.values[both], rtol=1e-6).mean() > 0.95
