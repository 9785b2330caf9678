"""The scaling view on a synthetic hybrid strong-scaling series whose figures
are known in closed form: runs as columns, coloured cells, reference and
mode changes, plot, exports."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

import popview
from popview.analysis.report import scale
from popview.analysis.report.scale import hex_colour
from popview.gui.advisor import palette
from popview.gui.scaling import ScalingPane
from popview.gui.state import AppState
from popview.testing.synthetic import write_scaling_series
from tests.gui.held_builds import hold_builds

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    d = tmp_path_factory.mktemp("scaling")
    return d, write_scaling_series(d, shapes=((1, 2), (2, 2), (4, 2)), total_work_ns=4_000_000, iterations=2)


@pytest.fixture
def pane(qtbot, series):
    d, runs = series
    state = AppState()
    p = ScalingPane(state)
    qtbot.addWidget(p)
    exps = [popview.open(path, cache_dir=d / "cache") for path, _ in reversed(runs)]
    for e in exps:
        state.add_experiment(e)
    yield p
    for e in exps:
        e.close()


def _cells(pane, row_name):
    it = pane.tree.findItems(row_name, Qt.MatchExactly | Qt.MatchRecursive, 0)[0]
    return it, [it.text(c) for c in range(1, pane.tree.columnCount())]


def _pct(v):
    return f"{v * 100:.1f} %"


def test_runs_are_columns_with_the_expected_figures(pane, series):
    _, runs = series
    ex = [e for _, e in runs]
    assert pane.model_box.currentData() == "hybrid-additive"          # what fits MPI + OpenMP
    pane.set_model("pop-mpi")
    headers = [pane.tree.headerItem().text(c) for c in range(pane.tree.columnCount())]
    assert headers == ["Metric", "1x2 (ref)", "2x2", "4x2"]
    item, cells = _cells(pane, "Parallel efficiency")
    assert cells == [_pct(e.parallel_efficiency()) for e in ex]
    assert item.parent().text(0) == "Global efficiency"
    assert item.background(1).color().name() == hex_colour(ex[0].parallel_efficiency())
    _, cells = _cells(pane, "Load balance")
    assert cells == [_pct(e.load_balance()) for e in ex]
    _, cells = _cells(pane, "Computation scalability")
    assert cells == [_pct(ex[0].useful_ns.sum() / e.useful_ns.sum()) for e in ex]
    table = pane.table
    assert table.mode == "strong" and "guessed" in pane.status.text()
    assert table.speedup() == pytest.approx([ex[0].runtime_ns / e.runtime_ns for e in ex], rel=1e-9)
    assert table.elements == [2, 4, 8]


def test_reference_and_mode_are_changeable(pane, series):
    _, runs = series
    ex = [e for _, e in runs]
    pane.set_mode("strong")
    pane.set_reference(2)
    _, cells = _cells(pane, "Computation scalability")
    assert cells == [_pct(ex[2].useful_ns.sum() / e.useful_ns.sum()) for e in ex]
    assert pane.tree.headerItem().text(3) == "4x2 (ref)"
    pane.set_reference(0)
    pane.set_mode("weak")
    assert pane.table.mode == "weak"
    _, cells = _cells(pane, "Computation scalability")
    assert cells == [_pct(ex[0].useful_ns.sum() * n / 2 / e.useful_ns.sum()) for n, e in zip((2, 4, 8), ex)]
    assert pane.table.speedup() == pytest.approx(
        [ex[0].runtime_ns / e.runtime_ns * n / 2 for n, e in zip((2, 4, 8), ex)], rel=1e-9)


def test_plot_shows_ideal_and_measured_speedup(pane):
    items = pane.speedup_plot.getPlotItem().listDataItems()
    assert [i.name() for i in items] == ["ideal", "measured"]
    assert list(items[0].getData()[1]) == [1.0, 2.0, 4.0]
    names = [i.name() for i in pane.efficiency_plot.getPlotItem().listDataItems()]
    assert "Parallel efficiency" in names and "Global efficiency" in names


@pytest.mark.parametrize("width", [900, 1400])
def test_every_run_of_the_plot_is_on_show_in_a_narrow_pane(qtbot, pane, width):
    """The legend shares the axes' layout column: three efficiencies in three columns (some
    470 px) widened the axes past the plot's right edge, so the largest runs were cut off
    (heat 1x1 / 1x2 / 2x2 in the Timeline-first strip: only x = 1 on show)."""
    pane.resize(width, 320)
    pane.show()
    qtbot.waitExposed(pane)
    qtbot.waitUntil(lambda: pane.table is not None, timeout=60_000)
    QApplication.processEvents()
    for plot in (pane.speedup_plot, pane.efficiency_plot):
        vb = plot.getPlotItem().getViewBox()
        right = vb.mapRectToScene(vb.boundingRect()).right()
        assert right <= plot.width() + 0.5, f"axes end at {right:.0f} px in a {plot.width()} px plot"
        x0, x1 = vb.viewRange()[0]
        xs = [i.getData()[0] for i in plot.getPlotItem().listDataItems()]
        assert x0 <= min(min(x) for x in xs) and max(max(x) for x in xs) <= x1


def test_exports(pane, tmp_path):
    pane.export_csv(tmp_path / "t.csv")
    pane.export_json(tmp_path / "t.json")
    pane.export_png(tmp_path / "p.png")
    pane.export_svg(tmp_path / "p.svg")
    csv_lines = (tmp_path / "t.csv").read_text().splitlines()
    assert csv_lines[0] == "metric,name,1x2,2x2,4x2"
    assert csv_lines[2].startswith("parallel_efficiency,Parallel efficiency,0.83056")
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["reference"] == "1x2" and [r["label"] for r in data["runs"]] == ["1x2", "2x2", "4x2"]
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.fromstring((tmp_path / "p.svg").read_text())


def test_ctrl_c_copies_the_table(qtbot, pane):
    pane.show()
    qtbot.waitExposed(pane)
    pane.activateWindow()
    pane.tree.setFocus()
    qtbot.waitUntil(pane.tree.hasFocus)
    qtbot.keyClick(pane.tree, Qt.Key_C, Qt.ControlModifier)
    assert QApplication.clipboard().text() == pane.table.to_csv()


def test_colour_blind_setting_recolours_the_cells(pane):
    setting = palette.setting()
    try:
        setting.set("colour-blind")
        item, _ = _cells(pane, "Parallel efficiency")
        assert item.background(1).color().name() == hex_colour(pane.table.row("parallel_efficiency").values[0])
        assert scale.colour(1.0)[2] > scale.colour(1.0)[1]
    finally:
        setting.set("red-green")
    item, _ = _cells(pane, "Parallel efficiency")
    assert item.background(1).color().name() == hex_colour(pane.table.row("parallel_efficiency").values[0])


def test_only_the_current_series_is_compared(pane, series):
    d, runs = series
    other = popview.open(runs[0][0], cache_dir=d / "cache")
    try:
        first = pane.state.current
        pane.state.add_experiment(other, series="another study")     # a new series is shown at once
        assert pane.state.current is other
        assert pane.table is None and "two or more runs" in pane.status.text()
        pane.state.set_current(first)
        assert pane.table.labels == ["1x2", "2x2", "4x2"]
    finally:
        other.close()


def test_view_state_round_trip(pane):
    pane.set_model("pop-mpi")
    pane.set_reference(1)
    pane.set_mode("weak")
    saved = pane.view_state()
    assert saved == {"model": "pop-mpi", "reference": 1, "mode": "weak"}
    pane.set_model("hybrid-additive")
    pane.set_reference(0)
    pane.set_mode("auto")
    pane.restore_view_state(saved)
    assert (pane.table.model, pane.table.reference, pane.table.mode) == ("pop-mpi", 1, "weak")


def test_one_run_asks_for_more(qtbot):
    p = ScalingPane(AppState())
    qtbot.addWidget(p)
    assert "two or more runs" in p.status.text()
    assert p.table is None


def test_the_advisor_follows_the_scaling_panes_choice(qtbot, series, tmp_path):
    """Strong or weak, picked in the Scaling pane, is the window's one choice: the Advisor's
    scalabilities take it too (it kept guessing over the series), and back to auto guesses."""
    from popview.gui.advisor.pane import AdvisorPane
    d, runs = series
    state = AppState()
    scaling, advisor = ScalingPane(state), AdvisorPane(state)
    for w in (scaling, advisor):
        qtbot.addWidget(w)
    exps = [popview.open(path, cache_dir=d / "cache") for path, _ in reversed(runs)]
    try:
        for e in exps:
            state.add_experiment(e)
        assert advisor.reference() is not None                       # a series: scalabilities against its smallest
        assert "guessed" in advisor.notes.toolTip()
        scaling.mode_box.setCurrentText("weak")                      # the user's pick in the Scaling pane
        assert "weak scaling (as requested)" in advisor.notes.toolTip()
        assert state.scaling == "weak" and scaling.table.mode == "weak"
        from popview.gui.advisor.export import report_job
        report = report_job(state, variant_keys=["pop-mpi"])(tmp_path / "report.html").read_text()
        assert "Weak scaling, reference run" in report                # the Advisor's report too
        state.set_scaling("strong")                                  # either way round: one state
        assert scaling.mode_box.currentText() == "strong" and scaling.table.mode == "strong"
        assert "strong scaling (as requested)" in advisor.notes.toolTip()
        scaling.mode_box.setCurrentText("auto")
        assert "guessed" in advisor.notes.toolTip() and "as requested" not in advisor.notes.toolTip()
    finally:
        for e in exps:
            e.close()


@pytest.mark.answers_later
def test_a_window_focus_builds_the_runs_sums_with_progress_and_a_cancel(qtbot, series, tmp_path, monkeypatch):
    """Runs converted without their window sums: a window focus builds them on the pane's lane
    with the progress entry (JobProgress: bar and Cancel); Cancel leaves no file beside the
    caches and the pane says the table is not computed because it was cancelled; the focus
    chosen again builds them and fills the table."""

    from popview.analysis.focus import Focus
    from popview.cache import window_sums
    from popview.gui.widgets.progress import JobProgress

    _, runs = series
    cache_dir = tmp_path / "c"
    started, gate, _ = hold_builds(monkeypatch, window_sums, 0.5, "summing")
    state = AppState()
    p = ScalingPane(state)
    qtbot.addWidget(p)
    p.show()
    exps = [popview.open(path, cache_dir=cache_dir) for path, _ in reversed(runs)]
    try:
        for e in exps:
            state.add_experiment(e)
        qtbot.waitUntil(lambda: not p.runner.busy and p.table is not None, timeout=60000)
        before = sorted(f.name for f in cache_dir.iterdir())
        focus = Focus.window(0, 2_000_000)
        state.set_focus(focus)
        qtbot.waitUntil(lambda: bool(started), timeout=60000)
        (entry,) = p.findChildren(JobProgress)
        assert entry.isVisible()
        qtbot.waitUntil(lambda: entry.bar.value() > 0, timeout=60000)
        entry.cancel_button.click()
        qtbot.waitUntil(lambda: not p.runner.busy, timeout=60000)
        assert "Not computed" in p.status.text() and "cancelled" in p.status.text() and p.table is None
        assert not [w for w in p.findChildren(JobProgress) if w.isVisible()]
        assert sorted(f.name for f in cache_dir.iterdir()) == before, "no sums, scratch or lock left"
        assert started == [False]
        gate.set()
        state.set_focus(Focus.whole())
        state.set_focus(focus)                    # chosen again
        qtbot.waitUntil(lambda: not p.runner.busy and p.table is not None, timeout=60000)
        assert all(e.window_sums_prepared for e in exps) and "Not computed" not in p.status.text()
    finally:
        for e in exps:
            e.close()


def test_a_low_wide_pane_leaves_the_plots_room_to_draw(qtbot, pane):
    """In the Overview layout (the Scaling tab some 200 px high, 1400 wide) the two plots were
    stacked: each gave its title, axis and legend the room and drew its curves in about 0 px
    (EPOCH 1-16: 'Speedup' and 'Efficiencies' with nothing between title and axis). A low,
    wide pane puts them side by side."""
    pane.resize(1400, 200)
    pane.show()
    qtbot.waitExposed(pane)
    qtbot.waitUntil(lambda: pane.table is not None, timeout=60_000)
    QApplication.processEvents()
    for plot in (pane.speedup_plot, pane.efficiency_plot):
        vb = plot.getPlotItem().getViewBox()
        assert vb.height() >= 40, f"{plot.getPlotItem().titleLabel.text!r}: curves in {vb.height():.0f} px"
    pane.resize(700, 700)                 # tall again: stacked, each as wide as the plots' side
    QApplication.processEvents()
    assert pane.plots.orientation() == Qt.Vertical


def test_the_table_before_its_figures_has_no_stray_header(qtbot):
    """While 'calculating...' (EPOCH 1-16, minutes behind the Advisor's work) the empty table's
    only header read '1', Qt's default."""
    p = ScalingPane(AppState())
    qtbot.addWidget(p)
    assert p.tree.headerItem().text(0) == "Metric"


@pytest.mark.answers_later
def test_a_sums_build_that_failed_is_not_tried_again_until_asked(qtbot, series, tmp_path, monkeypatch):
    """No room for the window sums (a full disk): the pane says the table is not computed,
    naming the run, the file and why. The run remembers the failure (Experiment.
    window_sums_failure): a change of model, reference, mode or window focus used to build the
    sums again (two attempts each, seconds on a large trace) to fail the same way; now they
    show the reason at once, and so does the Advisor on that run. The pane's "try again" and
    the Advisor's build again; with room again the table is computed."""
    from popview.analysis.focus import Focus
    from popview.cache import window_sums
    from popview.gui.advisor import AdvisorPane
    from popview.testing.faults import full_disk_build

    _, runs = series
    state = AppState()
    p = ScalingPane(state)
    qtbot.addWidget(p)
    calls, real = [], window_sums.build
    monkeypatch.setattr(window_sums, "build", full_disk_build(calls))      # no room for the sums
    exps = [popview.open(path, cache_dir=tmp_path / "c") for path, _ in reversed(runs)]
    try:
        for e in exps:
            state.add_experiment(e)
        qtbot.waitUntil(lambda: not p.runner.busy and p.table is not None, timeout=60000)
        state.set_focus(window := Focus.window(0, 2_000_000))
        qtbot.waitUntil(lambda: not p.runner.busy and "No space left on device" in p.status.text(), timeout=60000)
        assert len(calls) == 2, "the cache's folder, then a private file"
        text = p.status.text()
        p.set_model("pop-mpi")                              # the pane's own changes
        p.reference_box.setCurrentIndex(1)
        state.set_scaling("weak")
        state.set_focus(Focus.window(0, 1_000_000))        # another window focus
        qtbot.wait(300)
        qtbot.waitUntil(lambda: not p.runner.busy, timeout=60000)
        assert len(calls) == 2, "not built again"
        (failed,) = [e for e in exps if e.window_sums_failure is not None]
        assert f"Not computed: the window sums of {failed.name}" in text, text
        assert str(window_sums.path_of(failed.cache_path)) in text and p.table is None
        assert p.status.text() == text and p.table is None
        state.set_focus(window)
        state.set_scaling("auto")
        state.set_current(failed)
        advisor = AdvisorPane(state)                        # the Advisor on that run: the same
        qtbot.addWidget(advisor)
        qtbot.waitUntil(lambda: "could not be built" in advisor.current_tab().message.text(), timeout=60000)
        assert len(calls) == 2 and not advisor._sums_builds
        advisor._sums_again()                               # its "try again": built again
        qtbot.waitUntil(lambda: len(calls) == 4 and not advisor._sums_builds, timeout=60000)
        p.status.linkActivated.emit("again")                # the pane's: built again
        qtbot.waitUntil(lambda: len(calls) == 6 and not p.runner.busy, timeout=60000)
        assert "could not be built" in p.status.text()
        monkeypatch.setattr(window_sums, "build", real)     # room again
        p.status.linkActivated.emit("again")
        qtbot.waitUntil(lambda: not p.runner.busy and "calculating" not in p.status.text(), timeout=60000)
        assert p.table is not None, p.status.text()
        assert all(e.window_sums_prepared for e in exps) and "Not computed" not in p.status.text()
    finally:
        for e in exps:
            e.close()


@pytest.mark.answers_later
def test_while_the_first_runs_kernels_compile_the_table_says_so(qtbot, series, monkeypatch):
    """A first run on a new machine compiles the kernels for a minute or more (minutes under load:
    the EPOCH series in a fresh HOME); the Scaling tab said only "calculating...". It says what
    is happening, how far and how long, from the compiling threads (the GUI thread never waits)."""
    import threading

    from popview import firstuse
    from popview.gui import scaling
    from popview.gui.widgets import compiling

    go = threading.Event()
    built = scaling._build_table
    monkeypatch.setattr(scaling, "_build_table", lambda *a: go.wait(30) and built(*a))
    d, runs = series
    state = AppState()
    pane = ScalingPane(state)
    qtbot.addWidget(pane)
    exps = [popview.open(path, cache_dir=d / "cache") for path, _ in reversed(runs)]
    try:
        for e in exps:
            state.add_experiment(e)
        assert pane.status.text().startswith("calculating") and "..." not in pane.status.text()
        progress = compiling.progress()

        def compile_some(n):                  # as the helper process's compiles are relayed
            for _ in range(n):
                for phase in ("start", "end"):
                    firstuse.relay("analysis.replay.kernel.propagate", phase)
        worker = threading.Thread(target=compile_some, args=(6,))
        worker.start()
        worker.join()
        qtbot.waitUntil(lambda: "compiling" in pane.status.text(), timeout=5000)
        text = pane.status.text()
        assert text.startswith("calculating: compiling the analysis kernels (first run on this machine only, about ")
        assert f"{progress.done} of about {max(progress.expected, progress.done + 1)} done…" in text
        assert 10 <= progress.expected <= 30, "the analysis's kernels, from popview/resources/kernels.json"
        progress._quiet.setInterval(10)                # the compiles stop: back to the plain word
        firstuse.relay("analysis.replay.kernel.propagate", "end")
        qtbot.waitUntil(lambda: pane.status.text() == "calculating…", timeout=5000)
        progress._quiet.setInterval(compiling.QUIET_MS)
        go.set()
        qtbot.waitUntil(lambda: pane.table is not None, timeout=60_000)
        assert pane.status.text().startswith("Series") or "runs, reference" in pane.status.text()
    finally:
        go.set()
        pane.runner.wait()
        for e in exps:
            e.close()


def test_the_time_left_comes_from_the_compiles_rate(qtbot, monkeypatch):
    from popview.gui.widgets import compiling

    progress = compiling.CompileProgress(expected=60)
    assert progress.text() == ""
    now = [100.0]
    monkeypatch.setattr(compiling.time, "monotonic", lambda: now[0])
    progress._seen("k", 1, 1)
    now[0] = 101.0
    assert "about a minute" in progress.text() and "1 of about 60 done" in progress.text()
    progress.done = 20                                # 20 in 1 s: the first, small ones: no rate yet
    assert progress.left() == "about a minute"
    now[0] = 120.0
    assert progress.left() == "about 40 s left"       # 20 in 20 s: the 40 left in about 40 s
    progress.started = 21                             # one under way: still compiling when quiet
    progress._quieted()
    assert progress.compiling
    progress.done = 21
    progress._quieted()
    assert not progress.compiling and progress.text() == ""
    progress.deleteLater()


def test_in_the_overview_the_choices_are_not_cut(qtbot, series, tmp_path):
    """In the window the Scaling tab is laid out before any run opens; its boxes took their
    width then, empty, and cut their choices: 'Hybrid a', '1x1  hyb' (heat 1x1-2x2, Overview
    at 1500x920)."""
    from tests.gui import gallery

    d, runs = series
    window = gallery.open_window(qtbot, tmp_path, d / "cache", [p for p, _ in runs], len(runs), (1500, 920))
    window.docks["Scaling"].raise_()
    pane = window.panes["Scaling"]
    qtbot.waitUntil(lambda: pane.table is not None, timeout=60_000)
    qtbot.wait(200)
    assert pane.model_box.count() and pane.reference_box.count()
    assert not gallery.cut_choices(pane)
    pane.runner.wait()
