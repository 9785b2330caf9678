"""Every window text writes microseconds as µs, the way the trees, the timeline and the
histograms do: the Advisor's flush warning read '(829.6 us, 0.0063 % ...)' on heat 2x2 beside
trees writing '830 µs'. The command line's ASCII text keeps 'us'."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.node import MetricNode as Node
from popview.analysis.report import nodes
from popview.analysis.report import warnings as warn
from popview.analysis.report.table import Row
from popview.gui.advisor import AdvisorPane
from popview.gui.advisor.model import VALUE, MetricTreeModel, tooltip_html
from popview.gui.state import AppState
from popview.gui.timeline.pane import critical_path_summary

pytestmark = pytest.mark.gui

HEAT_2X2 = "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"


def test_the_advisors_flush_warning_writes_microseconds_as_the_window_does(qtbot, shared_traces, cache_dir):
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    exp = popview.open(shared_traces / HEAT_2X2, cache_dir=cache_dir)
    try:
        state.add_experiment(exp)
        qtbot.waitUntil(lambda: "flushed its buffers" in pane.warnings.toolTip(), timeout=120_000)
        shown = pane.warnings.toolTip()
        assert "829.6 µs" in shown and " us," not in shown, shown
        # the command line's text is ASCII, as it was
        assert "(829.6 us, " in warn.flushing_warning(exp, Focus.whole())
    finally:
        pane.runner.wait()
        exp.close()


def test_the_advisor_tree_and_its_help_write_microseconds_as_the_window_does(qtbot):
    node = Node("flush_time", "Flush time", value=829.6e-6, unit="s", kind="value", min=100e-6, avg=200e-6, max=829.6e-6,
                inputs={"flush_s": 829.6e-6})
    model = MetricTreeModel()
    model.set_roots([node])
    assert model.data(model.index(0, VALUE)) == "829.6 µs"
    help_text = tooltip_html(node)
    assert "829.6 µs" in help_text and "min 100 µs" in help_text and " us" not in help_text
    row = Row("flush_time", "Flush time", 0, "value", "s", [829.6e-6], [""], node=node)
    assert row.text(0, micro="µs") == "829.6 µs"
    assert nodes.format_value(node) == "829.6 us" and row.text(0) == "829.6 us"   # the CLI's table


def test_the_critical_path_line_writes_times_in_the_windows_units():
    path = {"loc": np.array([0, 1]), "begin": np.array([1_000_000, 2_000_000]), "end": np.array([1_500_000, 2_000_800]),
            "waiting": np.array([False, True])}
    text = critical_path_summary(path)
    assert text.startswith("critical path: 1 ms - 2 ms: 500 µs on 1 piece of work, 800 ns waiting"), text
