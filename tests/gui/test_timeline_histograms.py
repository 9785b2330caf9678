"""The Histograms pane: tables follow the window, cells mark records on the timeline, CSV."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.gui import jobs
from popview.gui.histograms import HistogramPane
from popview.gui.state import AppState
from popview.gui.timeline import TimelinePane
from popview.testing import synthetic


@pytest.fixture
def panes(qtbot, tmp_path):
    expected = synthetic.write(tmp_path / "h.prv", synthetic.Shape(processes=2, threads=2, iterations=4))
    state = AppState()
    timeline, hist = TimelinePane(state), HistogramPane(state)
    for w in (timeline, hist):
        qtbot.addWidget(w)
    exp = popview.open(tmp_path / "h.prv", cache_dir=tmp_path / "cache")
    state.add_experiment(exp)
    hist.window_box.setCurrentIndex(hist.window_box.findData("whole"))
    hist.refresh(wait=True)
    yield state, timeline, hist, expected
    jobs.wait_all(10_000)
    exp.close()


def test_state_table_shows_useful_time(panes):
    state, _, hist, expected = panes
    assert hist.table.kind == "states"
    running = hist.table.col_labels.index("Running")
    assert hist.table.stats["time"][:, running] == pytest.approx(expected.useful_ns)
    assert hist.model.rowCount() == 4 and hist.model.data(hist.model.index(0, running))


def test_focus_window_limits_the_table(panes):
    state, _, hist, _ = panes
    hist.window_box.setCurrentIndex(hist.window_box.findData("focus"))
    state.set_focus(Focus.window(0, 1_000_000))
    hist.refresh(wait=True)
    assert (hist.table.t0, hist.table.t1) == (0, 1_000_000)
    assert hist.table.stats["time"].sum(axis=1) == pytest.approx([1_000_000] * 4)


def test_cell_click_marks_records_on_the_timeline(panes):
    state, timeline, hist, _ = panes
    running = hist.table.col_labels.index("Running")
    hist._cell_clicked(hist.model.index(1, running))
    x, _ = timeline.view.highlight.getData()
    assert x is not None and len(x) > 0
    assert state.location == 1


def test_mpi_table_and_csv(panes, tmp_path):
    _, _, hist, _ = panes
    hist.kind_box.setCurrentIndex(hist.kind_box.findData("mpi"))
    hist.refresh(wait=True)
    assert "MPI_Allreduce" in hist.table.col_labels
    hist.stat_box.setCurrentText("count")
    hist.export_csv(tmp_path / "mpi.csv")
    rows = (tmp_path / "mpi.csv").read_text().splitlines()
    assert rows[0].startswith("MPI call × location") and "count" in rows[0]
    assert rows[-1].startswith("Total,")
    counts = np.array([[float(v or 0) for v in r.split(",")[1:]] for r in rows[1:-1]])
    assert counts.sum() == hist.table.stats["count"].sum()


def test_a_profile_says_why_there_is_no_table_where_the_table_would_be(qtbot, panes):
    """A profile left an empty table, an empty statistic choice and the reason in small grey
    print below: the reason now takes the table's place, the choices that need a table are off."""
    from popview.testing.synthetic_profile import ProfileExperiment, small_definitions, small_profile

    state, _timeline, hist, _expected = panes
    hist.resize(500, 400)
    hist.show()
    qtbot.waitExposed(hist)
    assert hist.pages.currentWidget() is hist.view and hist.stat_box.isEnabled()
    profile = ProfileExperiment(small_profile(), small_definitions(), is_trace=False)
    state.add_experiment(profile)
    state.set_current(profile)
    assert hist.pages.currentWidget() is hist.message and hist.message.isVisible()
    assert "a profile has no records" in hist.message.text()
    assert not hist.stat_box.isEnabled() and not hist.export_button.isEnabled()
    assert not hist.status.isVisible()
    state.set_current(state.experiments[0])
    hist.refresh(wait=True)
    assert hist.pages.currentWidget() is hist.view and hist.view.isVisible() and hist.stat_box.isEnabled()
