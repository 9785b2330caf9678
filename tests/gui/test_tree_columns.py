"""Tree columns as read on real numbers: an 11-digit counter is never cut, a narrow pane
scrolls instead of cutting a short metric name."""
from __future__ import annotations

from PySide6.QtCore import Qt

from popview.gui.state import AppState
from popview.gui.trees import MetricTreePane
from popview.model.profile import MetricDef, MetricValues
from popview.testing.synthetic_profile import SMALL_COMP, ProfileExperiment, small_definitions, small_profile


def _metric_pane(qtbot, counters, width: int) -> MetricTreePane:
    """The metric tree of a small profile with big counters, in a pane `width` px wide."""
    profile = small_profile()
    for name in counters:
        profile.metrics.append(MetricDef(name, name, "occ"))
        profile.values[name] = MetricValues.from_dense(SMALL_COMP * 4e9)
    state = AppState()
    pane = MetricTreePane(state)
    qtbot.addWidget(pane)
    pane.resize(width, 300)
    pane.show()
    state.add_experiment(ProfileExperiment(profile, small_definitions(), name="counters"))
    qtbot.waitExposed(pane)
    qtbot.wait(50)
    return pane


def test_big_counters_and_short_names_are_not_elided(qtbot):
    pane = _metric_pane(qtbot, ("PAPI_TOT_INS",), 230)      # ~ 1e11 in total
    model, header, metrics = pane.model, pane.view.header(), pane.view.fontMetrics()
    texts = [model.index(r, 1).data() for r in range(model.rowCount())]
    widest = max(texts, key=metrics.horizontalAdvance)
    assert len(widest.split()[0].replace(",", "")) >= 11            # e.g. 93,242,514,399 occ
    assert header.sectionSize(1) >= metrics.horizontalAdvance(widest) + 8
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert "Time" in names[0]
    assert header.sectionSize(0) >= metrics.horizontalAdvance("Time (sec)")
    assert model.headerData(1, Qt.Orientation.Horizontal)


def test_names_cut_in_a_narrow_pane_still_tell_counters_apart(qtbot):
    """In the Overview at 1280x800 the Metrics pane showed two rows 'PAPI_TOT_...'
    (PAPI_TOT_INS and PAPI_TOT_CYC): names are cut in the middle, keeping their ends."""
    pane = _metric_pane(qtbot, ("PAPI_TOT_INS", "PAPI_TOT_CYC"), 250)
    from PySide6.QtWidgets import QStyleOptionViewItem

    view, model = pane.view, pane.model
    delegate = view.itemDelegateForColumn(0)
    shown = []
    for r in range(model.rowCount()):
        index = model.index(r, 0)
        if not index.data().startswith("PAPI_TOT"):
            continue
        option = QStyleOptionViewItem()
        view.initViewItemOption(option)
        option.rect = view.visualRect(index)
        delegate.initStyleOption(option, index)
        assert option.text != index.data(), "the pane is not narrow enough to cut names"
        assert view.fontMetrics().horizontalAdvance(option.text) <= delegate.text_room(option)
        assert option.text[-1] == index.data().removesuffix(" (occ)")[-1], option.text
        shown.append(option.text)
    assert len(shown) == 2 and shown[0] != shown[1], shown


def test_a_cut_name_is_not_cut_again_by_the_style(qtbot):
    """The delegate's room was the style's text rectangle with its margins: the style cut
    'mpi_collecti…' once more, in the middle, to 'mpi_col…tive_c…'."""
    from PySide6.QtGui import QPainter, QPixmap
    from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

    profile = small_profile()
    profile.metrics.append(MetricDef("mpi_collective_calls", "mpi_collective_calls", "occ"))
    profile.values["mpi_collective_calls"] = MetricValues.from_dense(SMALL_COMP)
    state = AppState()
    pane = MetricTreePane(state)
    qtbot.addWidget(pane)
    pane.resize(250, 300)
    pane.show()
    state.add_experiment(ProfileExperiment(profile, small_definitions(), name="counters"))
    qtbot.waitExposed(pane)
    view, model = pane.view, pane.model
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data().startswith("mpi_coll"))
    index = model.index(row, 0)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    delegate = view.itemDelegateForColumn(0)
    delegate.initStyleOption(option, index)
    assert option.text != index.data() and option.text.startswith("mpi_coll")
    # what the style draws: its text rectangle less its margins must hold our cut whole
    style = view.style()
    rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, view)
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    assert option.fontMetrics.horizontalAdvance(option.text) <= rect.width() - 2 * margin
    drawn = option.fontMetrics.elidedText(option.text, option.textElideMode, rect.width() - 2 * margin)
    assert drawn == option.text
    pixmap = QPixmap(option.rect.size())
    painter = QPainter(pixmap)
    delegate.paint(painter, option, index)
    painter.end()


def test_a_narrow_metric_pane_gives_its_names_the_room(qtbot):
    """At 1600x1000 the Metrics pane (310 px) cut "Computation outside OpenMP (sec)" to
    "Computation o..." beside a value column sized for "0,000,000,000 occ" showing "846.1 ms":
    the value column fits the values on show, a sub-metric in its parent's unit does not repeat it."""
    pane = _metric_pane(qtbot, (), 310)
    pane.view.expandAll()
    qtbot.wait(50)
    model, header, metrics = pane.model, pane.view.header(), pane.view.fontMetrics()
    assert header.sectionSize(1) < metrics.horizontalAdvance("0,000,000,000 occ")
    rows, index = [], model.index(0, 0)
    while index.isValid():
        rows.append(index.data())
        index = pane.view.indexBelow(index)
    assert rows[0] == "Time" and "Computation" in rows and "Computation (sec)" not in rows
    assert "Visits (occ)" in rows
    mpi = pane.model.node_of_key("mpi")
    pane.pv.node("mpi").name = "MPI"
    pane.pv.node("mpi_p2p").name = "MPI point-to-point"
    assert model.name(mpi + 1) == "Point-to-point"          # not "MPI point-to-point" under "MPI"
    texts = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert header.sectionSize(1) >= max(metrics.horizontalAdvance(t) for t in texts if t) + 8


def test_the_metric_tree_says_it_is_the_whole_run_under_another_focus(qtbot):
    """Time 374 s read under "Focus: 7.02 s - 14.04 s" was taken for the window's: the trees
    hold the whole run's profile, and the pane says so once the focus is not the whole run."""
    from popview.analysis.focus import Focus

    pane = _metric_pane(qtbot, [], 400)
    assert not pane.scope_label.text()
    pane.state.set_focus(Focus.window(7_020_000_000, 14_040_000_000))
    assert pane.scope_label.text().startswith("Whole run")
    assert "7.02 s - 14.04 s" in pane.scope_label.toolTip()
    pane.state.set_focus(Focus.whole())
    assert not pane.scope_label.text()


def test_a_time_metric_does_not_say_sec_beside_values_in_ms(qtbot):
    """The Metrics pane named "Time (sec)" beside 843.3 ms and 57.19 µs: the values say their unit."""
    pane = _metric_pane(qtbot, (), 400)
    model = pane.model
    names = [model.name(i) for i in range(len(model.keys))]
    assert names[model.node_of_key("time")] == "Time" and not [n for n in names if "(sec)" in n]
    assert "Visits (occ)" in names
    assert model.index(model.node_of_key("time"), 1).data().endswith((" s", " ms", " µs"))
