"""The main window: pane registry, drag-and-drop opening, progress and cancel, layout memory."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, QSize, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMessageBox, QWidget

from popview.cache.progress import Cancelled
from popview.gui.mainwindow import PANES, MainWindow, PaneSpec
from popview.runs import runs_in, series_name
from popview.testing.synthetic import Shape, write, write_scaling_series
from popview.testing.synthetic_profile import ProfileExperiment, small_definitions, small_profile

MY_PANES = [s for s in PANES if s.module in ("popview.gui.experiments", "popview.gui.logpane", "popview.gui.trees",
                                            "popview.gui.topology")]


class MenuPane(QWidget):
    """A pane that contributes to the menus, as the contract allows."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.action = QAction("Do the thing", self)

    def menu_actions(self):
        return {"Analysis": [self.action], "Bookmarks": [QAction("Bookmark", self)]}


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "popview.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings, cache_dir):
    w = MainWindow(settings=settings, cache_dir=cache_dir, panes=MY_PANES)
    qtbot.addWidget(w)
    w.show()
    yield w
    for job in list(w.jobs):
        job.cancel()
        job.wait()


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    write(d / "alone.prv", Shape(processes=2, threads=1, iterations=2))
    write_scaling_series(d / "series", shapes=((1, 1), (2, 1)), iterations=2)
    (d / "broken.prv").write_text("#Paraver this is not a header\n")
    return d


def drop(widget, paths) -> QDropEvent:
    md = QMimeData()
    md.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPointF(widget.rect().center())
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    event = QDropEvent(pos, Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)
    return event


def wait_idle(qtbot, window, timeout=120_000):
    qtbot.waitUntil(lambda: not window.jobs, timeout=timeout)


# ---- registry -------------------------------------------------------------------------------
def test_a_pane_whose_module_is_missing_is_an_error_naming_it(qtbot, settings):
    specs = MY_PANES + [PaneSpec("popview.gui.not_written_yet", "NopePane", "Nope", Qt.DockWidgetArea.TopDockWidgetArea)]
    with pytest.raises(ModuleNotFoundError, match="popview.gui.not_written_yet"):
        MainWindow(settings=settings, panes=specs)


def test_panes_are_docks(qtbot, settings):
    specs = MY_PANES + [PaneSpec(__name__, "MenuPane", "Menu pane", Qt.DockWidgetArea.RightDockWidgetArea)]
    w = MainWindow(settings=settings, panes=specs)
    qtbot.addWidget(w)
    assert {"Experiments", "Metrics", "Call tree", "System tree", "Topology", "Log", "Menu pane"} <= set(w.docks)
    dock = w.docks["Call tree"]
    assert isinstance(dock, QDockWidget)
    assert dock.features() & QDockWidget.DockWidgetFeature.DockWidgetFloatable
    assert w.panes["Menu pane"].state is w.state
    assert w.panes["Menu pane"].action in w.menus["Analysis"].actions()
    assert [a.text() for a in w.menus["Bookmarks"].actions()] == ["Bookmark"]
    assert dock.toggleViewAction() in w.panes_menu.actions()


def test_layout_and_geometry_are_remembered(qtbot, settings):
    w = MainWindow(settings=settings, panes=MY_PANES)
    qtbot.addWidget(w)
    w.show()
    w.resize(700, 555)            # the offscreen screen is 800 x 800
    w.docks["Topology"].setFloating(True)
    size = (w.width(), w.height())
    w.close()
    again = MainWindow(settings=settings, panes=MY_PANES)
    qtbot.addWidget(again)
    assert again.docks["Topology"].isFloating()
    assert (again.width(), again.height()) == size
    assert size[1] == 555



def test_the_first_run_layout_is_the_one_asked_for_and_stays(qtbot, settings, monkeypatch):
    monkeypatch.setattr("popview.gui.mainwindow.free_room", lambda screen: QSize(1920, 1050))
    w = MainWindow(settings=settings)          # every pane: their size hints shape the layout
    qtbot.addWidget(w)
    w.show()
    # The sizes are asked for one event-loop turn after another: on a loaded machine that takes a while.
    qtbot.waitUntil(lambda: w.docks["Timeline"].height() >= 270 and w.docks["Advisor"].height() >= 220,
                    timeout=10_000)                # both readable
    qtbot.wait(300)
    widths = {name: dock.width() for name, dock in w.docks.items()}
    assert widths["Experiments"] <= 360           # the side column narrow, as asked (330)
    assert widths["Timeline"] >= 1000             # the rest for the timeline and the trees
    qtbot.wait(700)                               # Qt once moved the side column for a second
    assert {name: dock.width() for name, dock in w.docks.items()} == widths
    w.resizeDocks([w.docks["Experiments"]], [700], Qt.Orientation.Horizontal)
    qtbot.wait(200)
    assert w.docks["Experiments"].width() > 600
    w.reset_layout()                              # brings the first-run sizes back too
    qtbot.wait(300)
    assert w.docks["Experiments"].width() <= 360

def test_the_first_run_window_fits_a_1280_x_800_screen_and_no_pane_is_cut_off(qtbot, settings, monkeypatch):
    monkeypatch.setattr("popview.gui.mainwindow.free_room", lambda screen: QSize(1280, 770))  # minus a panel
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.wait(800)
    assert w.width() <= 1280 and w.height() <= 770 - 30            # room for a title bar
    for name, dock in w.docks.items():
        if not dock.visibleRegion().isEmpty():                     # shown, not a tab behind another
            hint = dock.widget().minimumSizeHint()
            assert dock.widget().height() >= hint.height() and dock.widget().width() >= hint.width(), name
    assert w.tabifiedDockWidgets(w.docks["System tree"]) == [w.docks["Topology"], w.docks["Distribution"]]


def test_on_a_tall_screen_the_topology_is_a_tab_beside_the_system_tree(qtbot, settings, monkeypatch):
    """Stacked under the System tree in the Overview's row of trees, each got some 120 px at
    1920x1080: two system-tree rows and topology cells 25 px high."""
    monkeypatch.setattr("popview.gui.mainwindow.free_room", lambda screen: QSize(1920, 1050))
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.docks["Timeline"].height() >= 270, timeout=10_000)
    qtbot.wait(300)
    assert w.tabifiedDockWidgets(w.docks["System tree"]) == [w.docks["Topology"], w.docks["Distribution"]]
    assert not w.docks["System tree"].visibleRegion().isEmpty()          # in front: the numbers
    assert w.docks["System tree"].height() >= 0.8 * w.docks["Call tree"].height()      # less its tab bar


# ---- opening ---------------------------------------------------------------------------------
def test_drop_a_file_opens_it_in_a_worker(qtbot, window, traces):
    drop(window, [traces / "alone.prv"])
    assert len(window.jobs) == 1                       # converting off the GUI thread
    wait_idle(qtbot, window)
    assert window.errors == []
    (exp,) = window.state.experiments
    assert exp.label == "2x1"
    assert window.state.current is exp
    assert window.panes["Experiments"].tree.topLevelItemCount() == 1
    assert "opened" in window.panes["Log"].contents()
    assert window.recent_files() == [str((traces / "alone.prv").resolve())]


def test_drop_on_a_floating_pane_opens_too(qtbot, settings, tmp_path, traces):
    opener = GatedOpener()
    opener.release.set()
    w = MainWindow(settings=settings, cache_dir=tmp_path, opener=opener, panes=MY_PANES)
    qtbot.addWidget(w)
    dock = w.docks["Topology"]
    dock.setFloating(True)
    drop(dock, [traces / "alone.prv"])
    wait_idle(qtbot, w, 10_000)
    assert [e.name for e in w.state.experiments] == ["alone"]


def test_drop_a_folder_of_runs_opens_a_series(qtbot, window, traces):
    drop(window, [traces / "series"])
    assert len(window.jobs) == 2
    wait_idle(qtbot, window)
    assert len(window.state.experiments) == 2
    assert set(window.state.series.values()) == {"series"}
    tree = window.panes["Experiments"].tree
    assert tree.topLevelItemCount() == 1
    assert tree.topLevelItem(0).text(0) == "series series"
    assert tree.topLevelItem(0).childCount() == 2


def test_dropped_files_named_alike_form_a_series(traces):
    runs = sorted((traces / "series").glob("*.prv"))
    assert series_name(runs) is not None
    assert series_name([traces / "alone.prv", runs[0]]) is None
    assert runs_in(traces / "alone.prv") == [(traces / "alone.prv", None)]


def test_run_folders_dropped_together_form_one_series(qtbot, window, tmp_path):
    """Extrae writes each run into a folder of its own (hyb_1x1/, hyb_1x2/, hyb_2x2/): dropped
    together they were three series of one run, each its own reference (scalabilities 100 %)."""
    folders = []
    for procs in (1, 2, 4):
        folder = tmp_path / f"run_{procs}x1"
        folder.mkdir()
        write(folder / "app.prv", Shape(processes=procs, iterations=2))
        folders.append(folder)
    assert runs_in(folders[0]) == [(folders[0] / "app.prv", None)]
    drop(window, folders)
    wait_idle(qtbot, window)
    assert len(window.state.experiments) == 3
    assert set(window.state.series.values()) == {"run_NxN"}
    assert window.panes["Experiments"].tree.topLevelItemCount() == 1


def test_failed_open_shows_a_dialog_and_logs_details(qtbot, window, traces):
    drop(window, [traces / "broken.prv"])
    wait_idle(qtbot, window)
    assert window.state.experiments == []
    assert len(window.errors) == 1 and "broken.prv" in window.errors[0]
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert boxes and "broken.prv" in boxes[0].text()
    assert "broken.prv" in window.panes["Log"].contents()
    assert not list(Path(window.cache_dir).rglob("*.h5")), "a failed conversion left a cache file"


def test_not_a_trace_is_refused_with_a_message(qtbot, window, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("hello")
    drop(window, [junk])
    assert not window.jobs
    assert "notes.txt" in window.errors[0]


class GatedOpener:
    """Reports half of the work, then waits to be released or cancelled."""

    def __init__(self):
        self.release = threading.Event()
        self.halfway = threading.Event()
        self.entered = []

    def __call__(self, path, cache_dir=None, progress=None, cancel=None):
        self.entered.append(Path(path).name)
        progress(0.5, "halfway")
        self.halfway.set()
        while not self.release.wait(0.01):
            if cancel.is_set():
                raise Cancelled("cancelled by the user")
        return ProfileExperiment(small_profile(), small_definitions(), name=Path(path).stem)


def test_progress_and_cancel(qtbot, settings, tmp_path, traces):
    opener = GatedOpener()
    w = MainWindow(settings=settings, cache_dir=tmp_path, opener=opener, panes=MY_PANES)
    qtbot.addWidget(w)
    w.show()
    w.open_paths([traces / "alone.prv"])
    (job,) = w.jobs
    progress = w.statusBar().findChildren(QWidget, options=Qt.FindChildOption.FindChildrenRecursively)
    from popview.gui.widgets.progress import JobProgress
    (widget,) = [p for p in progress if isinstance(p, JobProgress)]
    qtbot.waitUntil(lambda: widget.bar.value() == 50, timeout=10_000)
    assert widget.bar.text() == "50 %"
    qtbot.mouseClick(widget.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, w, 10_000)
    assert w.state.experiments == []
    assert w.errors == []                               # cancelling is not an error
    assert "cancelled" in w.panes["Log"].contents()
    assert not [p for p in w.statusBar().findChildren(JobProgress) if not p.isHidden() and p.parent()]
    opener.release.set()
    w.open_paths([traces / "alone.prv"])
    wait_idle(qtbot, w, 10_000)
    assert [e.name for e in w.state.experiments] == ["alone"]


def test_at_most_two_conversions_at_once(qtbot, settings, tmp_path, traces):
    opener = GatedOpener()
    w = MainWindow(settings=settings, cache_dir=tmp_path, opener=opener, panes=MY_PANES)
    qtbot.addWidget(w)
    w.open_paths([traces / "alone.prv", traces / "series"])
    assert len(w.jobs) == 3
    qtbot.waitUntil(lambda: len(opener.entered) == 2, timeout=5_000)
    qtbot.wait(300)
    assert len(opener.entered) == 2                     # the opening pool runs two at once
    waiting = next(j for j in w.jobs if j.path.name not in opener.entered)
    waiting.cancel()                                    # a waiting job ends at once
    qtbot.waitUntil(lambda: len(w.jobs) == 2, timeout=5_000)
    opener.release.set()
    wait_idle(qtbot, w, 10_000)
    assert len(w.state.experiments) == 2


def test_window_stays_responsive_while_converting(qtbot, settings, tmp_path, traces):
    opener = GatedOpener()
    w = MainWindow(settings=settings, cache_dir=tmp_path, opener=opener, panes=MY_PANES)
    qtbot.addWidget(w)
    w.open_paths([traces / "alone.prv"])
    assert opener.halfway.wait(10)
    ticks = []
    from PySide6.QtCore import QTimer
    QTimer.singleShot(10, lambda: ticks.append(1))
    qtbot.waitUntil(lambda: ticks == [1], timeout=2_000)   # the event loop runs during the open
    opener.release.set()
    wait_idle(qtbot, w, 10_000)


def test_real_conversion_cancelled_leaves_no_cache(qtbot, window, traces):
    window.open_paths([traces / "series"])
    for job in list(window.jobs):
        job.cancel()
    wait_idle(qtbot, window)
    assert window.state.experiments == []
    assert not list(Path(window.cache_dir).rglob("*.h5")), "a cancelled conversion left a cache file"


def test_close_experiment_and_session_files(qtbot, window, tmp_path, monkeypatch):
    exp = ProfileExperiment(small_profile(), small_definitions())
    window.state.add_experiment(exp)
    window.close_action.trigger()
    assert window.state.experiments == [] and exp.closed
    opened = []
    import popview.gui.session_binding as binding
    monkeypatch.setattr(binding, "open_session", lambda state, path: opened.append(Path(path)))
    window.open_paths([tmp_path / "work.popview"])
    assert opened == [tmp_path / "work.popview"]


def test_focus_and_value_mode_in_the_toolbar(window):
    from popview.analysis.focus import Focus
    window.state.set_focus(Focus.on_callpath("main/loop"))
    assert "main/loop" in window.focus_label.text()
    window.mode_combo.setCurrentIndex(window.mode_combo.findData("percent_root"))
    assert window.state.value_mode == "percent_root"


def test_runs_with_one_file_name_are_named_by_folder(tmp_path):
    a, b = tmp_path / "bt_4" / "profile.cubex", tmp_path / "bt_8" / "profile.cubex"
    assert series_name([a, b]) == "bt_N"
    assert series_name([tmp_path / "baseline" / "scout.cubex", tmp_path / "optimized" / "scout.cubex"]) is None


def test_demo_is_prepared_off_the_gui_thread_then_opened(qtbot, window, monkeypatch, tmp_path):
    from popview.gui import app

    session = tmp_path / "demo.popview"
    prepared_in, opened = [], []

    def ensure_demo():
        prepared_in.append(threading.current_thread())
        return session

    monkeypatch.setattr("popview.demo.ensure_demo", ensure_demo)
    monkeypatch.setattr(MainWindow, "open_paths", lambda self, paths: opened.append((list(paths),
                                                                                    threading.current_thread())))
    app._open_demo(window)
    qtbot.waitUntil(lambda: len(opened) == 1, timeout=5_000)
    assert opened[0] == ([session], threading.main_thread())
    assert prepared_in[0] is not threading.main_thread()


def test_the_first_use_compile_is_a_labelled_step_in_the_status_bar(qtbot, window):
    import threading

    from popview.gui.firstrun import install_compile_notice

    notice = install_compile_notice(window)
    worker = threading.Thread(target=notice.announce, args=("cache.pyramid.build", 3, 4))
    worker.start()
    worker.join()
    qtbot.waitUntil(notice.label.isVisible, timeout=3000)
    assert notice.label.text() == "Preparing popview for first use, once: compiling its kernels (3 done)..."
    notice._quiet.setInterval(10)
    notice.announce("cache.pyramid.build", 4, 4)
    qtbot.waitUntil(lambda: not notice.label.isVisible(), timeout=3000)   # gone once the compiles stop
    notice.deleteLater()


def test_the_first_use_step_counts_other_processes_compiles(window, qtbot):
    """The compile helper and the derived-data process compile in their own processes: their
    compiles, relayed, show in the same status-bar step."""
    from popview import firstuse
    from popview.gui.firstrun import install_compile_notice

    notice = install_compile_notice(window)
    relay = threading.Thread(target=lambda: [firstuse.relay("cache.pyramid.reduce_kernel", phase)
                                             for phase in ("start", "end")])
    relay.start()
    relay.join()
    qtbot.waitUntil(notice.label.isVisible, timeout=3000)
    assert notice.label.text() == "Preparing popview for first use, once: compiling its kernels (1 done)..."
    notice.deleteLater()
