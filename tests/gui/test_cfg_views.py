"""Paraver views (.cfg) in the window: dropped on a trace, or opened from File, each histogram
popview evaluates is a table named as in the cfg; what it does not evaluate is listed."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QTableView

from popview.analysis.cfg import Binning, CfgView, Criterion, Derivation, Function, Histogram, Window, read_cfg
from popview.analysis.cfg.writer import write_cfg
from popview.gui.cfgviews import CfgViewPane
from popview.gui.mainwindow import PANES, MainWindow
from popview.testing import synthetic

from tests.gui.test_mainwindow import drop, wait_idle

MY_PANES = [s for s in PANES if s.module in ("popview.gui.experiments", "popview.gui.logpane",
                                            "popview.gui.histograms")]
DBL_MAX = 1.7976931348623157e308


def _cfg(path):
    ins = Window("Instructions", 1, functions={"thread": Function("Next Evt Val")})
    ins.filters.criteria["evt_type"] = Criterion("=", (synthetic.INS,))
    useful = Window("Useful", 2, functions={"thread": Function("Useful")})
    product = Window("Useful Instructions Timeline", 3, derivation=Derivation("product", (1, 2)))
    full = (-DBL_MAX, DBL_MAX)
    view = CfgView("t", "3.4", "new", windows=[ins, useful, product], histograms=[
        Histogram("Useful duration", Binning(2, True, 1, 1, 1), 2, "Time", data_range=full, burst_range=full),
        Histogram("Useful instructions", Binning(3, False, 0, 1e18, 1e18), 3, "Sum bursts",
                  data_range=full, burst_range=full),
        Histogram("Average burst", Binning(2, True, 1, 1, 1), 2, "Stdev Burst Time",
                  data_range=full, burst_range=full)])
    path.write_text(write_cfg(view))
    return path


def _window(qtbot, tmp_path, cache_dir, panes):
    w = MainWindow(settings=QSettings(str(tmp_path / "p.ini"), QSettings.Format.IniFormat),
                   cache_dir=cache_dir, panes=panes)
    qtbot.addWidget(w)
    w.show()
    yield w
    for job in list(w.jobs):
        job.cancel()
        job.wait()


@pytest.fixture
def window(qtbot, tmp_path, cache_dir):
    yield from _window(qtbot, tmp_path, cache_dir, MY_PANES)


@pytest.fixture
def run(tmp_path):
    trace = tmp_path / "run.prv"
    expected = synthetic.write(trace, synthetic.Shape(processes=3, iterations=3, rank_weights=(1.0, 1.4, 0.6)))
    return trace, expected


def _pane(window) -> CfgViewPane:
    (pane,) = window.cfg_panes
    return pane


def _open(qtbot, window, cfg) -> CfgViewPane:
    """The new pane of a cfg opened from File, once evaluated (or failed)."""
    before = len(window.cfg_panes)
    window.open_cfg(cfg)
    assert len(window.cfg_panes) == before + 1
    pane = window.cfg_panes[-1]
    qtbot.waitUntil(lambda: pane.result is not None or pane.error is not None, timeout=60_000)
    return pane


def test_a_dropped_cfg_opens_its_histograms_as_tables_on_the_trace(qtbot, window, run, tmp_path):
    trace, expected = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    cfg = _cfg(tmp_path / "useful.cfg")
    drop(window, [cfg])
    pane = _pane(window)
    qtbot.waitUntil(lambda: pane.result is not None or pane.error is not None, timeout=60_000)
    assert pane.error is None and window.errors == []
    assert [pane.tabs.tabText(i) for i in range(pane.tabs.count())] == ["Useful duration", "Useful instructions"]
    duration, instructions = (t for _name, _caption, t in pane.result.tables)
    assert duration.col_labels == ["Running"] and duration.row_labels == ["THREAD 1.1.1", "THREAD 1.2.1", "THREAD 1.3.1"]
    np.testing.assert_allclose(duration.stats["Time"][:, 0], expected.useful_ns, rtol=1e-9)
    np.testing.assert_allclose(instructions.stats["Sum bursts"][:, 0], expected.instructions, rtol=1e-9)
    view = pane.tabs.widget(1).findChild(QTableView)
    assert (view.model().rowCount(), view.model().columnCount()) == (3, 1)
    assert view.model().headerData(0, Qt.Orientation.Vertical) == "THREAD 1.1.1"
    assert "Useful Instructions Timeline" in pane.tabs.widget(1).findChild(QLabel).text()   # the cfg's window name
    assert pane.not_evaluated.isVisible()
    assert "Average burst" in pane.not_evaluated.text() and "Stdev Burst Time" in pane.not_evaluated.text()
    dock = window.findChild(type(window.docks["Histograms"]), pane.parent().objectName())
    assert dock is not None and dock.windowTitle() == "Paraver view: useful.cfg"


def test_a_cfg_given_before_the_trace_is_open_waits_for_it(qtbot, window, run, tmp_path):
    trace, expected = run
    window.open_paths([trace, _cfg(tmp_path / "early.cfg")])      # as `popview run.prv view.cfg`
    assert window.cfg_panes == []
    wait_idle(qtbot, window)
    pane = _pane(window)
    qtbot.waitUntil(lambda: pane.result is not None, timeout=60_000)
    assert len(pane.result.tables) == 2


def _bad_cfgs(tmp_path) -> dict:
    """A cfg each way an analyst meets one that cannot be a view: what the message must say."""
    (tmp_path / "empty.cfg").write_bytes(b"")
    (tmp_path / "blank.cfg").write_text("\n  \n")
    (tmp_path / "binary.cfg").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "prose.cfg").write_text("hello\nthis is no view\n")
    (tmp_path / "dimemas.cfg").write_text("#DIMEMAS_CONFIGURATION\n")
    (tmp_path / "folder.cfg").mkdir()
    return {"missing.cfg": "No such file", "empty.cfg": "the file is empty", "blank.cfg": "the file is empty",
            "binary.cfg": "binary data, not a Paraver cfg", "prose.cfg": "not a Paraver cfg",
            "dimemas.cfg": "a Dimemas configuration", "folder.cfg": "Is a directory"}


def _said(window, name: str, why: str) -> str:
    (message,) = [m for m in window.errors if name in m]
    assert why in message, message
    assert "unexpected" not in message and "CfgError" not in message and "Traceback" not in message
    return message


def test_a_cfg_that_cannot_be_a_view_is_said_naming_the_file_and_why(qtbot, window, run, tmp_path):
    """It said "unexpected CfgError: ... (set POPVIEW_DEBUG=1 to see where)" in an empty pane.
    Now a dialog as for other bad inputs, naming the file and what is wrong, no pane left; the
    window goes on and opens a good view next."""
    trace, _ = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    cases = _bad_cfgs(tmp_path)
    for name, why in cases.items():
        window.open_cfg(tmp_path / name)                    # File > Open Paraver view
        qtbot.waitUntil(lambda name=name: any(name in m for m in window.errors), timeout=60_000)
        message = _said(window, name, why)
        assert str(tmp_path / name) in message
        qtbot.waitUntil(lambda: window.cfg_panes == [], timeout=10_000)      # no pane of nothing
    assert len(window.errors) == len(cases)
    pane = _open(qtbot, window, _cfg(tmp_path / "good.cfg"))
    assert pane.error is None and len(pane.result.tables) == 2


def test_a_missing_or_unreadable_cfg_on_the_command_line_is_said_at_once(qtbot, window, run, tmp_path,
                                                                         monkeypatch):
    """`popview run.prv missing.cfg`: said at once, not kept waiting for the trace; the trace opens."""
    trace, _ = run
    locked = tmp_path / "locked.cfg"
    _cfg(locked)
    real_open = open

    def no_permission(file, *args, **kwargs):
        if str(file) == str(locked):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr("builtins.open", no_permission)     # root reads a chmod 000 file
    window.open_paths([trace, tmp_path / "missing.cfg", locked])
    assert window._waiting_cfgs == []
    _said(window, "missing.cfg", "cannot read: No such file or directory")
    _said(window, "locked.cfg", "cannot read: Permission denied")
    wait_idle(qtbot, window)
    assert window.state.current is not None and window.cfg_panes == []


def test_a_refused_cfg_says_its_reason_in_one_line():
    from popview.analysis.cfg import CfgError
    from popview.failures import one_line

    assert one_line(CfgError("/x/v.cfg: line 3: unknown window")) == "/x/v.cfg: line 3: unknown window"


def test_the_file_menu_offers_paraver_views(window):
    texts = [a.text() for a in window.menus["File"].actions()]
    assert "Open Paraver &view (.cfg)..." in texts


def test_a_percent_time_table_says_percent(qtbot, window, run, tmp_path):
    trace, _ = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    states = Window("States", 1, functions={"thread": Function("State As Is")})
    full = (-DBL_MAX, DBL_MAX)
    cfg = tmp_path / "states.cfg"
    cfg.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[states], histograms=[
        Histogram("State profile", Binning(1, False, 0, 20, 1), 1, "% Time", data_range=full, burst_range=full,
                  gui={"Analyzer2D.HideCols": "True"})])))
    window.open_cfg(cfg)
    pane = _pane(window)
    qtbot.waitUntil(lambda: pane.result is not None, timeout=60_000)
    view = pane.tabs.widget(0).findChild(QTableView)
    labels = [view.model().headerData(c, Qt.Orientation.Horizontal) for c in range(view.model().columnCount())]
    running = view.model().index(0, labels.index("Running")).data()
    assert running.endswith(" %") and 0 < float(running[:-2]) <= 100


def test_a_cfgs_timelines_are_timeline_tabs_with_its_names_colours_and_range(qtbot, window, run, tmp_path):
    trace, expected = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    ins = Window("Instructions", 1, functions={"thread": Function("Next Evt Val")})
    ins.filters.criteria["evt_type"] = Criterion("=", (synthetic.INS,))
    cyc = Window("Cycles", 2, functions={"thread": Function("Next Evt Val")})
    cyc.filters.criteria["evt_type"] = Criterion("=", (synthetic.CYC,))
    ipc = Window("Instructions per cycle", 3, derivation=Derivation("divide", (1, 2)),
                 color_mode="window_in_null_gradient_mode", minimum_y=0.0, maximum_y=1.5,
                 gui={"window_open": "true"})
    useful = Window("Useful", 4, functions={"thread": Function("Useful")}, gui={"window_open": "true"})
    cfg = tmp_path / "ipc.cfg"
    cfg.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[ins, cyc, ipc, useful])))
    pane = _open(qtbot, window, cfg)
    assert pane.error is None and window.errors == []
    assert [pane.tabs.tabText(i) for i in range(pane.tabs.count())] == ["Instructions per cycle", "Useful"]
    assert "2 of 2 timelines" in pane.header.text() and not pane.not_evaluated.isVisible()
    gradient, code = pane.timeline_tabs
    assert "Instructions per cycle" in gradient.title.text() and "Instructions (Next Evt Val" in gradient.title.text()
    assert "null gradient 0 – 1.5 (the cfg's range)" in gradient.title.text()
    assert gradient.colour_range() == (0.0, 1.5) and code.colour_range() is None
    for tab in (gradient, code):
        assert tab.view.row_axis.labels == ["THREAD 1.1.1", "THREAD 1.2.1", "THREAD 1.3.1"]
    pane.tabs.setCurrentWidget(gradient)
    gradient.view.redraw_now()
    values = gradient.view.last_picture.values
    assert np.nanmax(values) > 0.2 and gradient.view.last_picture.source == "records"
    # Paraver's gradient: green at the minimum, blue at the maximum, orange above it
    lut = gradient.view.palette.lut
    assert tuple(lut[2]) == (0, 255, 0) and tuple(lut[253]) == (0, 0, 255) and tuple(lut[255]) == (255, 146, 24)
    index = gradient.view.last_index
    finite = np.isfinite(values) & (values > 0)
    expected_index = 2 + np.round(np.clip(values[finite] / 1.5, 0, 1) * 251)
    expected_index[values[finite] > 1.5] = 255
    np.testing.assert_array_equal(index[finite], expected_index)
    pane.tabs.setCurrentWidget(code)
    code.view.redraw_now()
    legend = [code.legend.item(i).text().rsplit("  ", 1)[0] for i in range(code.legend.count())]
    assert set(legend) == {"Idle", "Running"}         # useful: named by state (Paraver: STATE_TYPE)
    slot = int(np.flatnonzero(code.view.palette.keys == 1.0)[0]) + 1
    assert tuple(code.view.palette.lut[slot]) == (0, 0, 255)
    gradient.fit_scale()
    low, high = gradient.colour_range()
    assert (low, high) != (0.0, 1.5) and "fitted to the values shown" in gradient.title.text()


@pytest.fixture
def timeline_window(qtbot, tmp_path, cache_dir):
    yield from _window(qtbot, tmp_path, cache_dir, MY_PANES + [s for s in PANES if s.module == "popview.gui.timeline"])


@pytest.mark.answers_later
def test_saving_a_view_as_a_cfg_reads_the_trace_off_the_gui_thread(qtbot, timeline_window, run, tmp_path,
                                                                   monkeypatch):
    """Building the cfg reads every event's type (a pass over the trace, seconds on a large
    one): it runs on a background lane, and the status bar says when the file is written."""
    import threading

    from popview.analysis.cfg import export

    window = timeline_window
    trace, _ = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    pane = window.panes["Timeline"]
    qtbot.waitUntil(lambda: pane.view is not None and pane.view.last_picture is not None, timeout=60_000)
    readers = []
    present = export.present_event_types
    monkeypatch.setattr(export, "present_event_types",
                        lambda reader: readers.append(threading.current_thread()) or present(reader))
    saved = tmp_path / "later.cfg"
    window.save_view_cfg(saved)
    qtbot.waitUntil(lambda: saved.exists() and "Saved" in window.statusBar().currentMessage(), timeout=30_000)
    assert readers and all(t is not threading.main_thread() for t in readers)


def test_a_timeline_view_saved_as_a_cfg_opens_as_the_same_view(qtbot, timeline_window, run, tmp_path):
    window = timeline_window
    trace, _ = run
    assert "Save view as &Paraver cfg..." in [a.text() for a in window.menus["File"].actions()]
    window.open_paths([trace])
    wait_idle(qtbot, window)
    pane = window.panes["Timeline"]
    qtbot.waitUntil(lambda: pane.view is not None and pane.view.last_picture is not None, timeout=60_000)
    ipc = next(m for m in pane.view.data.modes() if m.kind == "ipc")
    pane.set_mode(ipc)
    t_end = int(pane.view.exp.definitions.t_end)
    pane.view.set_window(t_end // 4, t_end // 2)
    pane.view.redraw_now()
    low, high = pane.view.palette.low, pane.view.palette.high
    saved = tmp_path / "mine.cfg"
    assert window.save_view_cfg(saved) is None and saved.exists()
    cfg_pane = _open(qtbot, window, saved)
    assert cfg_pane.error is None
    assert [cfg_pane.tabs.tabText(i) for i in range(cfg_pane.tabs.count())] == ["IPC"]
    (tab,) = cfg_pane.timeline_tabs
    assert tab.colour_range() == pytest.approx((low, high))
    a, b = tab.view.window()
    assert abs(a - t_end // 4) <= 1 and abs(b - t_end // 2) <= 1          # the saved time window
    assert "Instructions (Next Evt Val" in tab.title.text() and "the cfg's range" in tab.title.text()
    callpath = next(m for m in pane.view.data.modes() if m.kind == "callpath")
    pane.set_mode(callpath)
    reason = window.save_view_cfg(tmp_path / "callpath.cfg")
    assert reason is not None and "call-path" in reason and not (tmp_path / "callpath.cfg").exists()


def test_a_3d_histogram_shows_one_plane_at_a_time_and_communications_per_partner(qtbot, window, run, tmp_path):
    trace, expected = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    useful = Window("Useful", 1, functions={"thread": Function("Useful")})
    states = Window("States", 2, functions={"thread": Function("State As Is")})
    full = (-DBL_MAX, DBL_MAX)
    cfg = tmp_path / "3d.cfg"
    cfg.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[useful, states], histograms=[
        Histogram("Useful per state", Binning(1, False, 0, 1, 1), 1, "Time", data_range=full, burst_range=full,
                  planes=Binning(2, True), plane_shown=1.0),
        Histogram("Messages", Binning(1, False, 0, 1, 1), 1, "#Sends", data_range=full, burst_range=full)])))
    pane = _open(qtbot, window, cfg)
    assert pane.error is None and [pane.tabs.tabText(i) for i in range(pane.tabs.count())] == \
        ["Useful per state", "Messages"]
    page = pane.tabs.widget(0)
    chooser = page.plane_box
    labels = [chooser.itemText(i) for i in range(chooser.count())]
    assert "Running" in labels and chooser.currentText() == "Running"       # 3D_FixedValue's plane
    model = page.findChild(QTableView).model()
    planes, shown = pane.result.planes[0]
    plane = planes[shown][1]
    assert plane.col_labels == ["Idle", "Running"]
    np.testing.assert_allclose(plane.stats["Time"][:, 1], expected.useful_ns, rtol=1e-9)   # running is useful
    other = next(i for i, text in enumerate(labels) if text != "Running")
    chooser.setCurrentIndex(other)
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Idle"         # not useful: column 0 (a state name) of the plane
    sends = pane.tabs.widget(1).findChild(QTableView).model()
    assert [sends.headerData(c, Qt.Orientation.Horizontal) for c in range(sends.columnCount())] == \
        ["THREAD 1.1.1", "THREAD 1.2.1", "THREAD 1.3.1"]


def test_closing_the_run_closes_its_paraver_views(qtbot, window, run, tmp_path):
    trace, _ = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    useful = Window("Useful", 1, functions={"thread": Function("Useful")}, gui={"window_open": "true"})
    cfg = tmp_path / "useful_view.cfg"
    cfg.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[useful])))
    window.open_cfg(cfg)
    pane = _pane(window)
    qtbot.waitUntil(lambda: pane.result is not None, timeout=60_000)
    (tab,) = pane.timeline_tabs
    window.close_experiment()
    qtbot.waitUntil(lambda: window.cfg_panes == [], timeout=10_000)
    assert tab.view._closed


def test_the_histograms_table_saved_as_a_cfg_opens_as_the_same_table(qtbot, window, run, tmp_path):
    trace, _ = run
    assert {"Save &histogram as Paraver cfg...", "Save Paraver vie&w as cfg..."} <= \
        {a.text() for a in window.menus["File"].actions()}
    window.open_paths([trace])
    wait_idle(qtbot, window)
    pane = window.panes["Histograms"]
    pane.window_box.setCurrentIndex(pane.window_box.findData("whole"))
    pane.kind_box.setCurrentIndex(pane.kind_box.findData("states"))
    pane.refresh(wait=True)
    qtbot.waitUntil(lambda: pane.table is not None and pane.table.kind == "states", timeout=60_000)
    assert pane.cfg_button.isEnabled()
    pane.stat_box.setCurrentText("bursts")
    table = pane.table
    saved = tmp_path / "states.cfg"
    assert window.save_histogram_cfg(saved) is None and saved.exists()
    cfg_pane = _open(qtbot, window, saved)
    assert cfg_pane.error is None
    ((name, _caption, shown),) = cfg_pane.result.tables
    assert name == "State × location: bursts" and shown.col_labels == table.col_labels
    np.testing.assert_allclose(shown.stats["# Bursts"], table.stats["bursts"])       # the same cells
    # a table Paraver cannot compute: refused with the reason, nothing written
    pane.kind_box.setCurrentIndex(pane.kind_box.findData("useful"))
    pane.refresh(wait=True)
    qtbot.waitUntil(lambda: pane.table is not None and pane.table.kind == "useful", timeout=60_000)
    reason = window.save_histogram_cfg(tmp_path / "useful.cfg")
    assert reason is not None and "logarithmic" in reason and not (tmp_path / "useful.cfg").exists()


def test_a_paraver_view_saved_back_opens_as_the_same_view(qtbot, window, run, tmp_path):
    trace, expected = run
    window.open_paths([trace])
    wait_idle(qtbot, window)
    original = _cfg(tmp_path / "useful.cfg")
    first = _open(qtbot, window, original)
    assert window.current_cfg_pane() is first
    saved = tmp_path / "back.cfg"
    assert window.save_cfg_view(saved) is None
    assert read_cfg(saved) == read_cfg(original)            # the same windows and histograms
    second = _open(qtbot, window, saved)
    assert [n for n, _c, _t in second.result.tables] == [n for n, _c, _t in first.result.tables]
    for (_n, _c, a), (_m, _d, b) in zip(first.result.tables, second.result.tables):
        assert a.col_labels == b.col_labels
        for stat in a.stats:
            np.testing.assert_array_equal(a.stats[stat], b.stats[stat])


def _overview_window(qtbot, tmp_path, cache_dir, run):
    """A 1600x960 window with every pane, the run open, in the Overview layout; and its
    generator (next() again cancels its jobs and waits for them)."""
    from popview.gui import layouts

    opened = _window(qtbot, tmp_path, cache_dir, list(PANES))
    window = next(opened)
    window.resize(1600, 960)
    window.open_paths([run[0]])
    wait_idle(qtbot, window)
    layouts.apply(window, layouts.OVERVIEW)
    return opened, window


def test_a_second_paraver_view_takes_no_more_room_from_the_timeline(qtbot, tmp_path, cache_dir, run):
    """Each Paraver view's pane was given 40 % of the window's height again, though it is tabbed
    where the first one has that room already: every view took 20-60 px more from the timeline
    and after two its time axis was cut. The first takes its room; the next ones none."""
    opened, window = _overview_window(qtbot, tmp_path, cache_dir, run)
    qtbot.wait(50)
    timeline = window.docks["Timeline"]
    _open(qtbot, window, _cfg(tmp_path / "first.cfg"))
    qtbot.wait(50)
    after_first = timeline.height()
    for name in ("second.cfg", "third.cfg"):
        _open(qtbot, window, _cfg(tmp_path / name))
        qtbot.wait(50)
    assert timeline.height() == after_first
    assert all(p.parent().height() >= 300 for p in window.cfg_panes if p.parent().isVisible())
    next(opened, None)                       # its jobs cancelled and waited for


def test_a_view_that_fails_gives_back_the_room_and_the_tab_it_took(qtbot, tmp_path, cache_dir, run):
    """The failed view's dock went, but the timeline stayed 55 px lower and the Histograms tab
    stayed raised over the Advisor (heat 1x2, 1600x1000, a binary .cfg on the command line)."""
    opened, window = _overview_window(qtbot, tmp_path, cache_dir, run)
    timeline, advisor = window.docks["Timeline"], window.docks["Advisor"]
    heights = []

    def settled() -> bool:                     # the layout's height, once it stops moving
        heights.append(timeline.height())
        return len(heights) > 3 and len(set(heights[-3:])) == 1
    qtbot.waitUntil(settled, timeout=10_000)
    height = timeline.height()
    assert not advisor.visibleRegion().isEmpty()
    (tmp_path / "binary.cfg").write_bytes(bytes(range(256)))
    window.open_cfg(tmp_path / "binary.cfg")
    qtbot.waitUntil(lambda: window.errors != [], timeout=60_000)
    qtbot.waitUntil(lambda: window.cfg_panes == [], timeout=10_000)
    qtbot.wait(50)
    assert timeline.height() == height
    assert not advisor.visibleRegion().isEmpty(), "the Advisor is raised again"
    next(opened, None)

