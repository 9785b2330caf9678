"""Box plot and sorted bars of the selected metric over locations (beside the System tree)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

import popview
from popview.analysis.distribution import sorted_locations, summarise
from popview.gui.distribution import BARS, BOX, BoxItem, DistributionPane
from popview.testing.synthetic import Shape, write
from tests.gui.panes import pane_alone


def test_summary_quartiles_whiskers_and_outliers():
    v = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 100, np.nan])
    s = summarise(v)
    assert (s.n, s.missing) == (9, 1)
    assert (s.q1, s.median, s.q3) == (3.0, 5.0, 7.0)
    assert (s.low, s.high) == (1.0, 8.0)                    # 100 is beyond q3 + 1.5 * IQR = 13
    assert list(s.outliers) == [8] and s.maximum == 100.0
    assert s.mean == pytest.approx(136 / 9)
    assert list(sorted_locations(v)[:3]) == [8, 7, 6] and 9 not in sorted_locations(v)
    assert summarise(np.full(3, np.nan)) is None


@pytest.fixture
def run(tmp_path, cache_dir):
    trace = tmp_path / "imbalanced.prv"
    write(trace, Shape(processes=4, iterations=3, work_ns=1_000_000, rank_weights=(1.0, 1.0, 1.0, 3.0)))
    exp = popview.open(trace, cache_dir=cache_dir)
    yield exp
    exp.close()


def drawn(pane, kind):
    return [i for i in pane.plot.getPlotItem().items if isinstance(i, kind)]


def test_box_plot_and_sorted_bars_of_the_selected_call_path(qtbot, run):
    state, pane = pane_alone(qtbot, DistributionPane, (400, 300))
    state.set_current(run)
    prof = run.profile()
    cp = next(c for c in range(prof.n_callpaths) if prof.name(c) == "timestep")
    state.select_metric("time")
    state.select_callpath(cp)
    expected = prof.by_location("time", cp, True)           # inclusive time of the call path per location
    np.testing.assert_allclose(pane.values, expected, rtol=1e-12)
    box, = drawn(pane, BoxItem)                             # one item for the box and whiskers
    assert box.summary.maximum == pytest.approx(expected.max())
    assert "max / mean" in pane.caption.text() and "timestep" in pane.caption.text()
    worst = run.definitions.locations[int(np.argmax(expected))]
    assert f"({pane.location_name(int(np.argmax(expected)))})" in pane.caption.text()
    assert run.definitions.processes[worst.process].name in pane.location_name(int(np.argmax(expected)))
    pane.set_kind(BARS)
    bars, = drawn(pane, pg.BarGraphItem)                    # one batched item for every bar
    heights = bars.opts["height"]
    np.testing.assert_allclose(heights, np.sort(expected)[::-1], rtol=1e-12)
    # the longest bar is rank 3's (weight 3): clicking it selects that location everywhere
    assert pane.location_at(0.1, 0.0) == int(np.argmax(expected))
    state.select_location(int(np.argmax(expected)))
    bars, = drawn(pane, pg.BarGraphItem)
    assert bars.opts["brushes"][0].color().getRgb()[:3] == (230, 0, 200)
    pane.set_kind(BOX)
    assert len(drawn(pane, BoxItem)) == 1


@pytest.mark.parametrize("value", [0.0, 3.28])
def test_one_value_at_every_location_is_a_line_on_a_readable_axis(qtbot, value):
    """Every location 0 s (an expanded node's exclusive time): the y range was 1e-30 wide, ticks read
    1e-31 ... 1e-30 or 3.2800000035, and the whiskers of length 0 painted a dark band over the plot."""
    values = np.full(4, value)
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(300, 300)
    plot.addItem(BoxItem(summarise(values), values))
    plot.setXRange(-1, 1, padding=0)
    plot.enableAutoRange(axis="y")
    plot.show()
    qtbot.waitExposed(plot)
    y0, y1 = plot.getPlotItem().getViewBox().viewRange()[1]
    assert y1 - y0 >= 0.05 * max(value, 1.0) and y0 <= value <= y1 and (value > 0 or y0 > -0.1)
    vb = plot.getPlotItem().getViewBox()
    image = plot.grab().toImage()

    def pixel(x, y):
        at = plot.mapFromScene(vb.mapViewToScene(pg.QtCore.QPointF(x, y)))
        return image.pixelColor(at.x(), at.y()).name()
    above = y0 + 0.85 * (y1 - y0)
    assert pixel(0.0, above) == pixel(0.0, y0 + 0.1 * (y1 - y0)) == pixel(0.8, above), "a band over the box"


def test_microseconds_in_seconds_are_no_outlier_and_do_not_fill_the_axis(qtbot):
    """heat 2x2 Extrae, all call paths: rank 0's master 12 us longer than the others' 3.28 s was flagged
    and drawn as an outlier, on an axis 12 us tall; a spread below 0.1 % of the values is none."""
    values = np.array([3.28 + 12e-6, 3.28, 3.28, 3.28])
    s = summarise(values)
    assert len(s.outliers) == 0 and s.high == values[0]
    assert list(summarise(np.array([3.3, 3.28, 3.28, 3.28])).outliers) == [0]   # 20 ms in 3.28 s still is
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(300, 300)
    plot.addItem(BoxItem(s, values))
    plot.setXRange(-1, 1, padding=0)
    plot.enableAutoRange(axis="y")
    plot.show()
    qtbot.waitExposed(plot)
    y0, y1 = plot.getPlotItem().getViewBox().viewRange()[1]
    assert y1 - y0 >= 0.05 * 3.28 and y0 <= 3.28 <= y1


def test_a_profile_without_the_metric_says_so(qtbot, run):
    state, pane = pane_alone(qtbot, DistributionPane, (400, 300))
    state.set_current(run)
    state.select_metric("no_such_metric")
    assert "not in this profile" in pane.caption.text()
    assert not drawn(pane, BoxItem)


def test_more_locations_than_bars_are_binned_by_rank(qtbot):
    from popview.gui.distribution import MAX_BARS
    _, pane = pane_alone(qtbot, DistributionPane)
    v = np.random.default_rng(3).gamma(2.0, 1.0, 3 * MAX_BARS + 7)
    pane.values, pane.summary, pane.order = v, summarise(v), sorted_locations(v)
    pane.unit, pane.what = "sec", "test"
    pane.set_kind(BARS)
    bars, = drawn(pane, pg.BarGraphItem)
    assert len(bars.opts["height"]) <= MAX_BARS and bars.opts["height"][0] == v.max()
    assert np.all(np.diff(bars.opts["height"]) <= 0)                 # still sorted, largest first
    assert sum(bars.opts["width"]) == pytest.approx(len(v))           # every rank in one bin
    assert pane.location_at(len(v) - 0.5, 0) == int(np.argmin(v))     # the last rank is the smallest


def test_a_time_axis_reads_in_the_windows_units_not_sec(qtbot, run):
    """The axis was labelled "sec" (pyqtgraph's ticks in seconds: 0.0001, 0.0002 ... beside a
    caption and trees in µs / ms); now ticks in ms / µs / s as the timeline's, and named "time"."""
    state, pane = pane_alone(qtbot, DistributionPane, (400, 300))
    state.set_current(run)
    prof = run.profile()
    cp = next(c for c in range(prof.n_callpaths) if prof.name(c) == "timestep")
    state.select_metric("time")
    state.select_callpath(cp)
    assert 1e-4 < float(np.max(pane.values)) < 1.0, "a call path of milliseconds"
    qtbot.waitExposed(pane)
    axis = pane.plot.getAxis("left")
    assert axis.labelText == "time" and "sec" not in axis.labelString() and "(x" not in axis.labelString()
    y0, y1 = pane.plot.getPlotItem().getViewBox().viewRange()[1]
    ticks = [v for level in axis.tickValues(y0, y1, 300) for v in level[1]]
    texts = axis.tickStrings(ticks, 1.0, ticks[1] - ticks[0])
    assert texts and all(t.endswith((" ms", " µs", " s", " ns")) for t in texts), texts
    pane.set_kind(BARS)                                   # four bars numbered 1-4, not 0, 0.5, 1 ...
    assert pane.plot.getAxis("bottom")._tickLevels == [[(k + 0.45, str(k + 1)) for k in range(4)]]
    state.select_metric("visits")                         # any other unit keeps its name and plain ticks
    assert pane.plot.getAxis("left").labelText == "occ"
