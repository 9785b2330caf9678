"""Histogram tables read right: OTF2 rows named by rank and thread, cell text readable on
its shade."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

import popview
from popview.analysis import histograms
from popview.gui.histograms import TableModel


def test_otf2_rows_name_the_rank_of_each_master_thread(shared_traces, cache_dir):
    exp = popview.open(shared_traces / "pipit/ping-pong-otf2/traces.otf2", cache_dir=cache_dir)
    with exp:
        names = [loc.name for loc in exp.definitions.locations]
        assert len(set(names)) < len(names), "the trace names several threads alike"
        table = histograms.build(exp, "states")
        assert len(set(table.row_labels)) == len(table.row_labels)
        for label, loc in zip(table.row_labels, exp.definitions.locations):
            assert exp.definitions.processes[loc.process].name in label and loc.name in label


def luminance(colour) -> float:
    return 0.2126 * colour.redF() + 0.7152 * colour.greenF() + 0.0722 * colour.blueF()


def contrast(a, b) -> float:
    hi, lo = sorted((luminance(a) + 0.05, luminance(b) + 0.05), reverse=True)
    return hi / lo


def test_cell_text_contrasts_with_its_shade(qtbot):
    stats = np.array([[1.0, 50.0, 100.0]])
    table = histograms.Table("states", "t", ["rank 0"], ["a", "b", "c"], {"time": stats}, {"time": "ns"},
                             0, 1, np.arange(3), np.arange(1))
    model = TableModel()
    model.set_table(table, "time")
    for col in range(3):
        index = model.index(0, col)
        back = model.data(index, Qt.ItemDataRole.BackgroundRole).color()
        text = model.data(index, Qt.ItemDataRole.ForegroundRole).color()
        assert contrast(back, text) >= 4.5, f"column {col}: text {text.name()} on {back.name()}"


def test_a_state_table_whose_rows_leave_time_unrecorded_says_so(qtbot, shared_traces, cache_dir):
    """heat 1x2 (Extrae): the worker records nothing while it waits; the rows added up to 93 % of
    the threads' time and the pane said nothing (the timeline's legend: Idle (no record))."""
    import popview
    from popview.gui.histograms import HistogramPane
    from tests.gui.panes import pane_alone

    path = shared_traces / "popview-heat/extrae/hyb_1x2/hyb_1x2.prv"
    state, pane = pane_alone(qtbot, HistogramPane, (700, 300))
    with popview.open(path, cache_dir=cache_dir) as exp:
        state.add_experiment(exp)
        qtbot.waitUntil(lambda: pane.table is not None, timeout=60_000)
        share = 1 - pane.table.stats["time"].sum() / ((pane.table.t1 - pane.table.t0) * len(pane.table.row_labels))
        assert share > 0.05
        assert f"{share:.0%} of the threads' time in this window has no state record" in pane.status.text()
