"""A trace converted without its timeline overview (`popview convert`) opens in the
window at once (its trees and Advisor read the cache) and gets a correct timeline: the
Timeline pane builds the overview on a lane of its own, never in the GUI thread, with
its progress and Cancel (popview.cache.overview)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QSettings

import popview
from popview.analysis.timeline_data import ColourMode, TimelineData
from popview.cache import overview
from popview.experiment import convert
from popview.gui.mainwindow import PANES, MainWindow
from popview.gui.state import AppState
from popview.gui.timeline import TimelinePane
from popview.testing import synthetic
from popview.testing.faults import full_disk_build
from tests.gui.held_builds import hold_builds

PANES_HERE = [s for s in PANES if s.module in ("popview.gui.experiments", "popview.gui.logpane", "popview.gui.timeline")]
PANES_AND_TREES = [s for s in PANES if s.module in ("popview.gui.experiments", "popview.gui.logpane", "popview.gui.timeline",
                                                    "popview.gui.trees", "popview.gui.advisor")]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("tl_overview")
    synthetic.write(d / "h.prv", synthetic.Shape(processes=2, threads=2, iterations=6, work_ns=2_000_000))
    return d / "h.prv"


@pytest.fixture
def builds(monkeypatch):
    """The threads the overview was built in (and a gate to hold a build in the middle)."""
    seen, gate, _ = hold_builds(monkeypatch, overview, 0.1, "building the timeline pyramid")
    gate.set()
    return seen, gate


def _window(qtbot, tmp_path, cache_dir, panes=PANES_HERE):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), cache_dir=cache_dir,
                   panes=panes)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def _expected(trace, cache_dir, rows, width):
    """The picture of the whole run from an overview built with the conversion (elsewhere)."""
    with popview.open(trace, cache_dir=cache_dir, timeline=True) as exp:
        data = TimelineData(exp)
        return data.picture(ColourMode("state"), rows, 0, data.t_end, width)


def test_a_cache_converted_without_the_overview_opens_with_a_correct_timeline(qtbot, tmp_path, cache_dir, trace,
                                                                              builds, monkeypatch):
    from popview.analysis import timeline_data

    monkeypatch.setattr(timeline_data, "RAW_BUDGET", 0)         # drawn from the pyramid's levels
    cache, _ = convert(trace, cache_dir)                          # as `popview convert` does
    assert not overview.path_of(cache).exists()
    w = _window(qtbot, tmp_path, cache_dir)
    w.open_paths([trace])
    pane = w.panes["Timeline"]
    qtbot.waitUntil(lambda: len(w.state.experiments) == 1 and not w.jobs and pane.view is not None, timeout=120_000)
    seen, _ = builds
    assert seen == [False], "built once, on the Timeline pane's lane, not in the GUI thread"
    assert overview.path_of(cache).exists()
    view = pane.view
    view.redraw_now()
    assert view.last_picture.source.startswith("pyramid") and view.last_picture.values.size
    full = view.data.picture(ColourMode("state"), view.last_rows, 0, view.data.t_end, 300)
    want = _expected(trace, tmp_path / "elsewhere", view.last_rows, 300)
    assert np.array_equal(full.values, want.values) and np.array_equal(full.share, want.share)


def test_a_run_converted_by_the_command_line_appears_before_its_overview_is_built(qtbot, tmp_path, cache_dir,
                                                                                  trace, builds):
    """The opening does not wait for the overview (6-10 s at 1 GB): while its build is held,
    the run is open, its trees and Advisor filled from the cache, and the Timeline pane shows
    the build's progress and Cancel; the timeline draws once the build ends."""
    from popview.gui.widgets.progress import JobProgress

    cache, _ = convert(trace, cache_dir)                          # as `popview convert` does
    seen, gate = builds
    gate.clear()
    w = _window(qtbot, tmp_path, cache_dir, PANES_AND_TREES)
    w.open_paths([trace])
    qtbot.waitUntil(lambda: len(w.state.experiments) == 1 and not w.jobs, timeout=60_000)
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)           # the pane's build, held
    assert seen == [False] and not overview.path_of(cache).exists()
    pane = w.panes["Timeline"]
    assert pane.view is None and "Building the timeline overview" in pane.message.text()
    (progress,) = [p for p in pane.findChildren(JobProgress) if p.isVisible()]
    assert progress.cancel_button.isEnabled()
    metrics, advisor = w.panes["Metrics"], w.panes["Advisor"]
    assert metrics.model.rowCount() > 0, "the metric tree is read from the cache"
    assert w.panes["Call tree"].model.root_total() > 0
    qtbot.waitUntil(lambda: advisor.current_tab().tree.isEnabled() and advisor.current_tab().model.rowCount() > 0,
                    timeout=60_000)
    assert not overview.path_of(cache).exists(), "all of that without the overview"
    gate.set()
    qtbot.waitUntil(lambda: pane.view is not None, timeout=60_000)
    pane.view.redraw_now()
    assert pane.view.last_picture.values.size and pane.view.last_picture.source != "none"
    assert seen == [False] and overview.path_of(cache).exists()
    assert not [p for p in pane.findChildren(JobProgress) if p.isVisible()], "the entry goes with its build"


def test_cancel_of_the_panes_build_keeps_the_run_and_leaves_nothing(qtbot, tmp_path, cache_dir, trace, builds):
    """Cancel in the Timeline pane stops the overview's build: the run stays open, no file
    is left beside the cache, the pane says so and offers to build it again."""
    from popview.gui.widgets.progress import JobProgress

    cache, _ = convert(trace, cache_dir)
    seen, gate = builds
    gate.clear()
    w = _window(qtbot, tmp_path, cache_dir)
    w.open_paths([trace])
    qtbot.waitUntil(lambda: bool(seen) and not w.jobs, timeout=60_000)          # the build is under way
    pane = w.panes["Timeline"]
    (progress,) = [p for p in pane.findChildren(JobProgress) if p.isVisible()]
    progress.cancel_button.click()
    qtbot.waitUntil(lambda: not pane._preparing, timeout=60_000)
    assert len(w.state.experiments) == 1 and w.errors == []
    assert pane.view is None and "cancelled" in pane.message.text()
    assert sorted(p.name for p in cache_dir.iterdir()) == [cache.name], "no overview, scratch or lock left"
    gate.set()


@pytest.mark.answers_later
def test_a_run_added_without_its_overview_gets_it_on_a_lane_not_in_the_gui_thread(qtbot, trace, tmp_path, builds):
    """Runs that reach the window another way than its openings (tests, sessions of
    tomorrow): the pane builds the overview on a lane and makes the view when it is there."""
    seen, gate = builds
    gate.clear()
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    pane.show()
    exp = popview.open(trace, cache_dir=tmp_path / "c")
    state.add_experiment(exp)
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert pane.view is None and "Building the timeline overview" in pane.message.text()
    gate.set()
    qtbot.waitUntil(lambda: pane.view is not None, timeout=60_000)
    assert seen == [False]
    pane.view.redraw_now()
    assert pane.view.last_picture is not None and pane.view.last_picture.values.size
    exp.close()


@pytest.mark.answers_later
def test_the_panes_own_build_shows_progress_and_a_cancel_that_leaves_nothing(qtbot, trace, tmp_path, builds):
    """The pane's own building lane shows the status bar's progress entry (JobProgress: a
    bar and Cancel); Cancel stops the build, leaves no file beside the cache, the pane says
    the timeline is not there because it was cancelled, and its link builds it again."""
    from popview.gui.widgets.progress import JobProgress

    seen, gate = builds
    gate.clear()
    cache_dir = tmp_path / "c"
    cache, _ = convert(trace, cache_dir)
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    pane.show()
    exp = popview.open(trace, cache_dir=cache_dir)
    state.add_experiment(exp)
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    (progress,) = pane.findChildren(JobProgress)
    assert progress.isVisible() and progress.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: progress.bar.value() >= 10, timeout=60_000)       # the build's 10 %
    progress.cancel_button.click()
    qtbot.waitUntil(lambda: not pane._preparing, timeout=60_000)
    assert pane.view is None and "cancelled" in pane.message.text()
    assert not [w for w in pane.findChildren(JobProgress) if w.isVisible()], "the entry goes with its build"
    assert sorted(p.name for p in cache_dir.iterdir()) == [cache.name], "no overview, scratch or lock left"
    gate.set()
    pane.message.linkActivated.emit("again")                   # "Build it again"
    qtbot.waitUntil(lambda: pane.view is not None, timeout=60_000)
    assert overview.path_of(cache).exists() and seen == [False, False]
    exp.close()


def test_a_full_disk_opens_the_run_without_a_timeline_and_says_why(qtbot, tmp_path, cache_dir, trace, monkeypatch):
    """The overview cannot be written anywhere (the cache's folder and the temporary one
    full): the run opens (its profile, metrics), the Timeline pane says why, no error
    dialog, and nothing builds it again, in the GUI thread or elsewhere (compare view)."""

    from popview.gui.compare import CompareView

    cache, _ = convert(trace, cache_dir)
    calls = []
    monkeypatch.setattr(overview, "build",
                        full_disk_build(calls, lambda path: threading.current_thread() is threading.main_thread()))
    w = _window(qtbot, tmp_path, cache_dir)
    w.open_paths([trace])
    qtbot.waitUntil(lambda: len(w.state.experiments) == 1 and not w.jobs, timeout=120_000)
    pane = w.panes["Timeline"]
    qtbot.waitUntil(lambda: "could not be built" in pane.message.text(), timeout=60_000)
    assert exp_failure(w) is not None
    assert "no space left" in pane.message.text().lower() and pane.view is None
    assert w.errors == [] and calls == [False, False], "tried once (the folder, then a private file), off the GUI thread"
    (exp,) = w.state.experiments
    assert exp.profile() is not None
    view = CompareView(exp, exp)
    qtbot.addWidget(view)
    for side in view.timelines.views:
        side.redraw_now()
        assert side.last_picture.source == "none" and "could not be built" in side.last_picture.message
    assert calls == [False, False]
    view.close()


def exp_failure(w):
    (exp,) = w.state.experiments
    return exp.timeline_failure


def test_the_compare_view_builds_missing_overviews_on_lanes_then_draws(qtbot, trace, tmp_path, builds):
    """A compare view opened before the runs' overviews exist builds them on lanes of its own
    (progress and Cancel in its place), never in the GUI thread where its timelines draw."""
    from popview.gui.compare import CompareView
    from popview.gui.widgets.progress import JobProgress

    seen, gate = builds
    gate.clear()
    cache_dir = tmp_path / "c"
    cache, _ = convert(trace, cache_dir)
    exp = popview.open(trace, cache_dir=cache_dir)
    threading.Timer(120, gate.set).start()          # a build held in the GUI thread would hang the test
    view = CompareView(exp, exp)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert view.timelines is None and "Building the timeline overview" in view.place.message.text()
    assert [p for p in view.place.findChildren(JobProgress) if p.isVisible()]
    gate.set()
    qtbot.waitUntil(lambda: view.timelines is not None, timeout=60_000)
    assert seen == [False], "built once, off the GUI thread"
    for side in view.timelines.views:
        side.redraw_now()
        assert side.last_picture.values.size and side.last_picture.source != "none"
    view.close()
    exp.close()


@pytest.mark.answers_later
def test_every_way_the_window_shows_a_timeline_builds_the_overview_off_the_gui_thread(qtbot, tmp_path, cache_dir,
                                                                                        builds, monkeypatch):
    """Runs converted by `popview convert` (no overview) reach the window by drag and drop
    and File > Open, as a series, and again from a saved session: each overview is built
    once, on the Timeline pane's lanes; the timelines, the critical-path overlay, a time window chosen
    on the timeline, the histograms, a bookmark, the compare view's timelines and a cfg's
    timeline tabs then read it and never build it (in the GUI thread or anywhere)."""
    from PySide6.QtWidgets import QFileDialog

    from popview.analysis.cfg import CfgView, Function, Window
    from popview.analysis.cfg.writer import write_cfg
    from popview.gui.compare import CompareView
    from popview.gui.session_binding import open_session
    from tests.gui.test_compare_runs import make_window
    from tests.gui.test_mainwindow import drop

    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    seen, _ = builds
    runs = tmp_path / "runs"
    runs.mkdir()
    a, b = runs / "heat_1x2.prv", runs / "heat_2x2.prv"
    synthetic.write(a, synthetic.Shape(processes=1, threads=2, iterations=5, work_ns=2_000_000))
    synthetic.write(b, synthetic.Shape(processes=2, threads=2, iterations=5, work_ns=1_000_000))
    caches = [convert(p, cache_dir)[0] for p in (a, b)]
    assert not any(overview.path_of(c).exists() for c in caches)
    panes = [s for s in PANES if s.module in ("popview.gui.experiments", "popview.gui.logpane", "popview.gui.timeline",
                                              "popview.gui.histograms", "popview.gui.bookmarks")]

    def window():
        w, binding = make_window(qtbot, tmp_path, cache_dir, panes)
        w.resize(1400, 900)
        w.show()
        return w, binding

    w, binding = window()
    drop(w, [a])                                                   # drag and drop
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *args, **kw: ([str(b)], ""))
    w.open_dialog()                                                # File > Open
    pane = w.panes["Timeline"]
    qtbot.waitUntil(lambda: len(w.state.experiments) == 2 and not w.jobs and len(pane.views) == 2, timeout=120_000)
    assert seen == [False, False] and w.errors == []
    for view in pane.views.values():
        view.redraw_now()
        assert view.last_picture.values.size and view.last_picture.source != "none"
    pane.path_box.setChecked(True)                                 # the critical-path overlay
    view = pane.view
    qtbot.waitUntil(lambda: view.critical_path is not None or view.critical_path_error is not None, timeout=60_000)
    view.windowSelected.emit(view.data.t_end // 4, view.data.t_end // 2)   # a time window chosen on the timeline
    assert w.state.focus.kind == "window"
    view.redraw_now()
    hist = w.panes["Histograms"]
    hist.refresh(wait=True)
    qtbot.waitUntil(lambda: hist.table is not None, timeout=60_000)
    w.panes["Bookmarks"].ask_bookmark = lambda default: ("half", "")
    w.panes["Bookmarks"].bookmark_view()
    w.panes["Bookmarks"].restore(w.state.session.bookmarks[0].id)
    compare = CompareView(*w.state.experiments)                    # the side-by-side compare view
    qtbot.addWidget(compare)
    for side in compare.timelines.views:
        side.redraw_now()
        assert side.last_picture.values.size and side.last_picture.source != "none"
    compare.close()
    cfg = tmp_path / "useful.cfg"
    cfg.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[
        Window("Useful", 1, functions={"thread": Function("Useful")}, gui={"window_open": "true"})])))
    w.open_cfg(cfg)                                                # a cfg's timeline tab
    (cfg_pane,) = w.cfg_panes
    qtbot.waitUntil(lambda: cfg_pane.result is not None or cfg_pane.error is not None, timeout=60_000)
    assert cfg_pane.error is None
    (tab,) = cfg_pane.timeline_tabs
    tab.view.redraw_now()
    assert tab.view.last_picture.values.size
    assert seen == [False, False], "nothing built the overviews again"

    binding.ask_save_path = lambda: tmp_path / "study"
    assert binding.save_as()
    assert w.close()
    for c in caches:                                               # a saved session reopened, overviews gone
        overview.path_of(c).unlink()
    w2, _ = window()
    open_session(w2.state, tmp_path / "study.popview")
    qtbot.waitUntil(lambda: len(w2.state.experiments) == 2 and not w2.jobs and len(w2.panes["Timeline"].views) == 2,
                    timeout=120_000)
    assert seen == [False] * 4 and w2.errors == []
    for view in w2.panes["Timeline"].views.values():
        view.redraw_now()
        assert view.last_picture.values.size and view.last_picture.source != "none"
    assert seen == [False] * 4


def test_the_pictures_kernels_are_compiled_on_a_lane_before_the_first_timeline(qtbot, trace, tmp_path, monkeypatch):
    """The pictures are drawn in the GUI thread: on a first run their kernels' compiles
    (0.4-1 s each) froze the window at the first timeline. The pane compiles them on its lane
    before it makes the view, also for a run whose overview is there already."""
    from popview.analysis import timeline_data

    popview.open(trace, cache_dir=tmp_path / "c", timeline=True).close()       # the overview is there
    monkeypatch.setattr(timeline_data, "_warm", False)
    warmed_in: list[bool] = []
    no_view_yet: list[bool] = []
    real = timeline_data.warm_kernels

    def warm() -> None:
        warmed_in.append(threading.current_thread() is threading.main_thread())
        no_view_yet.append(pane.view is None)
        real()

    monkeypatch.setattr(timeline_data, "warm_kernels", warm)
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    pane.show()
    exp = popview.open(trace, cache_dir=tmp_path / "c")
    exp.prepare_timeline()                            # open: as after the window's own conversion
    assert exp.timeline_prepared
    state.add_experiment(exp)
    qtbot.waitUntil(lambda: pane.view is not None, timeout=60_000)
    assert warmed_in == [False] and no_view_yet == [True] and timeline_data.kernels_warm()
    pane.view.redraw_now()
    assert pane.view.last_picture is not None and pane.view.last_picture.values.size
    exp.close()
