"""A truncated Paraver trace in the window: the heat 1x2 run cut at half its bytes has no record
after 879 ms of its 1.457 s, and the timeline drew its OpenMP worker 'Idle (no record: OpenMP
worker waiting)' from there to the end, time that no record says anything of. The time after
the last record (report.warnings.records_end, the time the metric tables' warning gives) is now
hatched grey and said unrecorded, counted as no state's and no idle time; the state table says
how much of its window lies past the cut."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import popview
from popview.analysis.histograms import state_table
from popview.analysis.report.warnings import records_end
from popview.analysis.timeline_data import IDLE_GAP, ColourMode, TimelineData

pytestmark = pytest.mark.gui

RUN = "popview-heat/extrae/hyb_1x2/hyb_1x2"


@pytest.fixture(scope="module")
def cut_run(tmp_path_factory, shared_traces):
    src = shared_traces / (RUN + ".prv")
    if not src.exists():
        pytest.skip(f"{src} is not among the shared traces")
    d = tmp_path_factory.mktemp("cut")
    data = src.read_bytes()
    (d / "hyb_1x2.prv").write_bytes(data[:len(data) // 2])
    for side in (".pcf", ".row"):
        shutil.copy(src.with_suffix(side), d / ("hyb_1x2" + side))
    exp = popview.open(d / "hyb_1x2.prv", cache_dir=d / "cache")
    yield exp
    exp.close()


def test_no_idle_is_drawn_after_the_last_record(cut_run):
    exp = cut_run
    assert exp.definitions.flags.get("truncated")
    end, t_end = records_end(exp), int(exp.definitions.t_end)
    assert 0.5 * t_end < end < 0.7 * t_end                      # 879 ms of 1.457 s
    data = TimelineData(exp)
    width = 1000
    for t0, t1 in ((0, t_end), (end - (t_end - end), t_end)):   # whole, and zoomed across the cut
        pic = data.picture(ColourMode("state", label="State"), np.arange(data.n_loc), t0, t1, width)
        centre = t0 + (np.arange(width) + 0.5) * (t1 - t0) / width
        after = centre > end + (t1 - t0) / width
        assert not (pic.values[:, after] == IDLE_GAP).any()
        assert (pic.values[:, ~after] == IDLE_GAP).any()         # the worker's waits before the cut stay
    assert data.recorded_end == end


def test_the_timeline_hatches_the_time_after_the_cut(qtbot, cut_run):
    from popview.gui.timeline.view import TimelineView

    view = TimelineView(cut_run)
    qtbot.addWidget(view)
    end, region, label = view.trace_end
    assert end == records_end(cut_run)
    assert region.getRegion() == (end, cut_run.definitions.t_end)
    assert "trace ends here" in label.textItem.toPlainText() and "878.7 ms" in label.textItem.toPlainText()


def test_the_state_table_says_its_window_reaches_past_the_cut(cut_run):
    t_end = int(cut_run.definitions.t_end)
    notes = state_table(cut_run, 0, t_end).notes
    assert any("truncated" in n and "878.7 ms" in n and "40%" in n for n in notes), notes
    assert not any("truncated" in n for n in state_table(cut_run, 0, records_end(cut_run) // 2).notes)
