"""The collection's generic timeline cfgs drawn by popview agree with popview's own colour modes
on the shared Paraver traces: EPOCH (MPI, 4 ranks), popview-heat Extrae 2x2 (MPI+OpenMP),
PyPOP's ImageMagick (OpenMP, 4 threads), the Extrae course's MPI prime and OpenMP correlation
codes: states, MPI calls (by name), OpenMP parallel functions, useful duration, IPC, wherever
the trace has the mode (a trace without it skips that check, saying so)."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.cfg import read_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
from popview.analysis.cfg.paramedir import value_names
from popview.analysis.cfg.timeline import shown_windows, window_timeline
from popview.analysis.timeline_data import TimelineData

TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
          "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv",
          "imagemagick4": "pypop/openmp/imagemagick_example_traces/omp4.prv.gz",
          "prime": "extraeCoursecodes/MPItraces/prime_v0.prv",
          "correlation": "extraeCoursecodes/OpenMP/code01/correlation_v0.prv"}
CFGS = "paraver-cfgs/parami/cfgs"


@pytest.fixture(scope="module", params=sorted(TRACES))
def epoch(request, shared_traces, tmp_path_factory):
    """(experiment, TraceColumns) of each shared trace in turn (named epoch for history)."""
    path = shared_traces / TRACES[request.param]
    if not path.exists():
        pytest.skip(f"{path} is not in the shared traces")
    with popview.open(path, cache_dir=tmp_path_factory.mktemp("cache")) as exp:
        yield exp, TraceColumns.from_cache(exp.reader, exp.definitions)


def _mode(data, kind):
    mode = next((m for m in data.modes() if m.kind == kind), None)
    if mode is None:
        pytest.skip(f"the trace has no {kind!r} colour mode to compare with")
    return mode


def _pictures(shared_traces, epoch, cfg, kind, t0, t1, width=3000):
    exp, trace = epoch
    view = read_cfg(shared_traces / CFGS / cfg)
    window = shown_windows(view)[-1]
    timeline = window_timeline(view, window, evaluate_window(view, window.position, trace), trace.t_end,
                               value_names(window, exp.definitions), exp.definitions)
    rows = np.arange(trace.n_rows)
    theirs, _ = timeline.picture(rows, t0, t1, width)
    data = TimelineData(exp)
    mode = _mode(data, kind)
    ours = data.picture(mode, rows, t0, t1, width)
    return timeline, theirs, ours, data, mode


def _window(epoch, fraction=0.5, span=20_000_000):
    t = int(epoch[1].t_end * fraction)
    return t, t + span


def test_state_as_is_is_popview_s_state_colours(shared_traces, epoch):
    theirs, ours = [], []
    for fraction in np.linspace(0.05, 0.95, 19):       # zoomed in (100 ns pixels) at 19 places of the run
        t0, t1 = _window(epoch, fraction, 2_000_000)
        _, a, b, _, _ = _pictures(shared_traces, epoch, "General/views/state_as_is.cfg", "state", t0, t1, 20_000)
        theirs.append(a)
        ours.append(b)
    theirs = np.concatenate(theirs, axis=1)
    values = np.concatenate([b.values for b in ours], axis=1)
    share = np.concatenate([b.share for b in ours], axis=1)
    shown = (values >= 0) & np.isfinite(theirs) & (share > 0.99)        # pixels inside one state
    assert shown.mean() > 0.3 and len(np.unique(theirs[shown])) >= 1    # running (and MPI / OpenMP states)
    assert (theirs[shown] == values[shown]).mean() > 0.999


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
    assert both.mean() > 0.3
    np.testing.assert_allclose(theirs[both] * unit_ns, ours.values[both], rtol=1e-9)


def test_ipc_zoomed_in_is_popview_s_ipc(shared_traces, epoch):
    t0, t1 = _window(epoch, 0.6, 5_000_000)
    _, theirs, ours, _, _ = _pictures(shared_traces, epoch, "counters_PAPI/performance/IPC.cfg", "ipc", t0, t1)
    both = np.isfinite(ours.values) & np.isfinite(theirs) & (theirs > 0)
    assert both.mean() > 0.3
    assert np.isclose(theirs[both], ours.values[both], rtol=1e-6).mean() > 0.95


def _parallel_functions(shared_traces, epoch, t0, t1, width=40_000):
    exp, trace = epoch
    if 60000018 not in set(np.unique(trace.events["type"]).tolist()):
        pytest.skip("the trace has no OpenMP parallel function events (60000018)")
    view = read_cfg(shared_traces / CFGS / "OpenMP/views/parallel_functions.cfg")
    window = shown_windows(view)[-1]
    timeline = window_timeline(view, window, evaluate_window(view, window.position, trace), trace.t_end,
                               value_names(window, exp.definitions), exp.definitions)
    theirs, _ = timeline.picture(np.arange(trace.n_rows), t0, t1, width)
    return timeline, theirs


def test_openmp_parallel_functions_are_inside_popview_s_openmp_constructs(shared_traces, epoch):
    exp, trace = epoch
    data = TimelineData(exp)
    mode = _mode(data, "openmp")
    _, theirs = _parallel_functions(shared_traces, epoch, 0, trace.t_end)
    ours = data.picture(mode, np.arange(trace.n_rows), 0, trace.t_end, 40_000)
    running = np.isfinite(theirs) & (theirs > 0) & (ours.share > 0.99)     # Paraver: in a parallel function
    assert running.sum() > 100
    assert (ours.values[running] >= 0).mean() > 0.99                       # popview: in an OpenMP construct


def test_openmp_parallel_functions_are_popview_s_outlined_functions(shared_traces, epoch):
    exp, trace = epoch
    data = TimelineData(exp)
    modes = [m for m in data.modes() if m.kind == "callpath"]
    if not modes:
        pytest.skip("the trace has no call paths")
    timeline, theirs = _parallel_functions(shared_traces, epoch, 0, trace.t_end)
    mode = modes[-1]                                                      # the deepest call paths popview draws
    ours = data.picture(mode, np.arange(trace.n_rows), 0, trace.t_end, 40_000)
    inside = np.isfinite(theirs) & (theirs > 0) & (ours.values >= 0) & (ours.share > 0.99)
    assert inside.sum() > 100 and len(np.unique(theirs[inside])) >= 1
    # popview names an outlined function with its construct's source line ("main._omp_fn.0
    # @heat_hybrid.c:107"), Paraver by the function alone
    agree = [timeline.label(a) in [part.split(" @")[0] for part in data.category_label(mode, int(b)).split("/")]
             for a, b in zip(theirs[inside], ours.values[inside])]
    assert np.mean(agree) > 0.99
