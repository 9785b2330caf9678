"""Two stacked timelines as an analyst opens them: the heat Score-P 2x2 and Extrae 2x2 runs
together, in the first-run (Overview) layout. Their time axes write a time the same way, and
both runs are whole on screen without scrolling."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from tests.gui import gallery
from tests.gui.gallery import plots_as_before  # noqa: F401 - autouse fixture

pytestmark = pytest.mark.gui

RUNS = ("popview-heat/scorep/hyb_2x2/traces.otf2", "popview-heat/extrae/hyb_2x2/hyb_2x2.prv")
SIZES = ((1500, 920), (1280, 800))


@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def window(request, qtbot, tmp_path, cache_dir, shared_traces):
    paths = [shared_traces / r for r in RUNS]
    missing = [p for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"{missing[0]} is not among the shared traces")
    window = gallery.open_window(qtbot, tmp_path, cache_dir, paths, 2, request.param)
    pane = window.panes["Timeline"]
    qtbot.waitUntil(lambda: len(pane.views) == 2, timeout=120_000)
    qtbot.wait(600)                  # the first-run sizes, asked one after the other
    window.resize(*request.param)
    qtbot.wait(300)
    QApplication.processEvents()
    return window


def axis_labels(view) -> dict[int, str]:
    """What the view's time axis writes at each tick (ns -> text), every level of ticks, as
    pyqtgraph asks the axis for them when it paints."""
    axis = view.time_axis
    lo, hi = axis.range
    out = {}
    for spacing, values in axis.tickValues(lo, hi, axis.width()):
        for value, text in zip(values, axis.tickStrings(values, 1.0, spacing)):
            out[round(value)] = text
    return out


def test_equal_times_tick_the_same_on_every_stacked_timeline(window):
    """Score-P 2x2 (4.97 s) ticked '1 s', Extrae 2x2 (3.28 s) beneath it '1.0 s'."""
    views = list(window.panes["Timeline"].views.values())
    labels = [axis_labels(v) for v in views]
    assert all(labels)
    units = {text.split()[-1] for one in labels for text in one.values()}
    assert len(units) == 1, units                    # seconds on both: each run lasts seconds
    shared = set(labels[0]) & set(labels[1])
    assert shared, "both runs tick some of the same times"
    for t in shared:
        assert labels[0][t] == labels[1][t], (t, labels[0][t], labels[1][t])
    for one in labels:                               # each written as briefly as it reads
        assert not any(text.split()[0].endswith((".0", ".00")) for text in one.values()), one
