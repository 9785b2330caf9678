"""A cfg timeline window as the timeline draws it: Paraver's draw modes per pixel, from the
intervals and from the pyramid, and the cfg's colouring."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis.cfg import Binning, CfgView, Histogram, Criterion, Derivation, Function, Window
from popview.analysis.cfg import timeline as tl
from popview.analysis.cfg.evaluate import Timeline


def _timeline(rows):
    """Per row a list of (begin, end, value)."""
    parts = [(r, b, e, v) for r, items in enumerate(rows) for b, e, v in items]
    row, begin, end, value = (np.array(x) for x in zip(*parts))
    return Timeline(row.astype(np.int32), begin.astype(np.int64), end.astype(np.int64), value.astype(np.float64),
                    len(rows))


def _cfg_timeline(rows, drawmode="draw_maximum", t_end=100, **window):
    view = CfgView("t", "3.4", "new", windows=[Window("W", 1, drawmode=drawmode, **window)])
    return tl.window_timeline(view, view.windows[0], _timeline(rows), t_end)


# one row: 0 for [0,10), 5 for [10,20), 0 for [20,30), 3 for [30,40), 7 for [40,100)
ROW = [(0, 10, 0.0), (10, 20, 5.0), (20, 30, 0.0), (30, 40, 3.0), (40, 100, 7.0)]


@pytest.mark.parametrize("mode, expected", [
    ("draw_maximum", [5.0, 7.0]),
    ("draw_last", [0.0, 7.0]),
    ("draw_minnotzero", [5.0, 3.0]),
    ("draw_average", [5 / 3, 5.0]),
    ("draw_averagenotzero", [5.0, 5.0]),
])
def test_each_pixel_is_the_draw_mode_of_the_values_in_it(mode, expected):
    t = _cfg_timeline([ROW], mode)
    values, source = t.picture([0], 0, 60, 2)          # pixels [0,30) and [30,60)
    assert source == "records"
    np.testing.assert_allclose(values[0], expected)


def test_a_pixel_without_interval_has_no_value_and_unknown_rows_are_empty():
    t = _cfg_timeline([[(0, 10, 1.0)], []], t_end=40)
    values, _ = t.picture([0, 1, 5], 0, 40, 4)
    assert values[0, 0] == 1.0 and np.isnan(values[0, 1:]).all()
    assert np.isnan(values[1:]).all()


def test_random_and_mode_are_drawn_as_the_maximum_and_say_so():
    t = _cfg_timeline([ROW], "draw_random")
    assert t.draw_mode == "draw_maximum" and t.notes == ["draw_random drawn as draw_maximum", tl.ZERO_NOTE]


def test_zoomed_out_the_pyramid_gives_what_the_intervals_give(monkeypatch):
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(5):
        cuts = np.unique(rng.integers(1, 10**6, 3000))
        edges = np.r_[0, cuts, 10**6]
        rows.append([(int(a), int(b), float(v)) for a, b, v in zip(edges[:-1], edges[1:], rng.integers(0, 9, len(edges)))])
    for mode in ("draw_maximum", "draw_minnotzero", "draw_last"):
        t = _cfg_timeline(rows, mode, t_end=10**6)
        exact, source = t.picture(np.arange(5), 0, 10**6, 64)
        assert source == "records"
        monkeypatch.setattr(tl, "RAW_BUDGET", 10)
        pyramid, source = t.picture(np.arange(5), 0, 10**6, 64)
        monkeypatch.undo()
        assert source.startswith("pyramid level")
        np.testing.assert_array_equal(pyramid, exact)       # pixels are whole bins here: exact


def test_colours_follow_the_cfg():
    code = _cfg_timeline([ROW])
    assert code.colouring.code                               # no colour mode: code colours, as Paraver's loader
    ranged = _cfg_timeline([ROW], color_mode="window_in_null_gradient_mode", minimum_y=0.0, maximum_y=1.5)
    c = ranged.colouring
    assert (c.code, c.null_gradient, c.low, c.high, c.from_cfg) == (False, True, 0.0, 1.5, True)
    computed = _cfg_timeline([ROW], color_mode="window_in_gradient_mode")
    assert (computed.colouring.low, computed.colouring.high, computed.colouring.from_cfg) == (0.0, 7.0, False)
    assert tl.code_colour(1) == (0, 0, 255) and tl.code_colour(49) == tl.code_colour(0) == (117, 195, 255)


def test_the_windows_shown_are_the_open_ones_else_the_final_ones():
    ins = Window("Instructions", 1, functions={"thread": Function("Next Evt Val")})
    ins.filters.criteria["evt_type"] = Criterion("=", (42000050,))
    cyc = Window("Cycles", 2, functions={"thread": Function("Next Evt Val")})
    ipc = Window("IPC", 3, derivation=Derivation("divide", (1, 2)))
    view = CfgView("t", "3.4", "new", windows=[ins, cyc, ipc])
    assert [w.name for w in tl.shown_windows(view)] == ["IPC"]
    view.histograms.append(Histogram("H", Binning(3), 3, "Time"))
    assert tl.shown_windows(view) == []                  # a histogram's hidden windows stay hidden
    cyc.gui["window_open"] = "true"
    assert [w.name for w in tl.shown_windows(view)] == ["Cycles"]
    assert tl.describe(view, ipc) == ("Instructions (Next Evt Val, events = 42000050) / "
                                      "Cycles (Next Evt Val)")


# a worker: value 5 for 2 ns of every 10 ns, zero (idle, in no state the window shows) between
BURSTS = [(k, k + 2, 5.0) for k in range(0, 1000, 10)] + [(k + 2, k + 10, 0.0) for k in range(0, 1000, 10)]


def test_zoomed_out_the_windows_zeros_keep_their_share_where_they_are(monkeypatch):
    """draw_maximum drew every pixel holding a burst in the burst's colour: a thread idle 80 %
    of the time looked busy all along, its idle gaps in the neighbouring state's colour. What
    the timeline draws (drawn) keeps the zeros' share, records and pyramid alike; zoomed in,
    pixels are the draw mode's."""
    t = _cfg_timeline([sorted(BURSTS)], "draw_maximum", t_end=1000)
    assert t.zero_in_proportion and tl.ZERO_NOTE in t.notes
    values, _ = t.picture([0], 0, 1000, 10)
    assert (values == 5.0).all()                                   # Paraver's draw mode: the maximum
    drawn, source = t.drawn([0], 0, 1000, 10)
    assert source == "records" and (drawn == 0.0).sum() == 8 and (drawn == 5.0).sum() == 2
    monkeypatch.setattr(tl, "RAW_BUDGET", 10)
    zoomed_out, source = t.drawn([0], 0, 1000, 10)
    assert source.startswith("pyramid level") and (zoomed_out == 0.0).sum() == 8
    monkeypatch.undo()
    zoomed_in, _ = t.drawn([0], 0, 100, 50)                        # 2 ns a pixel: each pixel one interval
    np.testing.assert_array_equal(zoomed_in, t.picture([0], 0, 100, 50)[0])


def test_gradients_and_not_zero_draw_modes_keep_the_draw_mode():
    for mode, window in (("draw_maximum", {"color_mode": "window_in_gradient_mode"}), ("draw_minnotzero", {}),
                         ("draw_average", {})):
        t = _cfg_timeline([sorted(BURSTS)], mode, t_end=1000, **window)
        assert not t.zero_in_proportion and tl.ZERO_NOTE not in t.notes
        np.testing.assert_array_equal(t.drawn([0], 0, 1000, 10)[0], t.picture([0], 0, 1000, 10)[0])


@pytest.mark.shared
def test_a_state_as_is_cfg_draws_heat_workers_idle_as_long_as_they_are(shared_traces, tmp_path):
    """parami's State As Is view on popview-heat Extrae 2x2: at the whole run, its workers' idle
    (value 0) takes the share of their pixels it takes zoomed in, not 20 %."""
    import popview
    from popview.analysis.cfg import read_cfg
    from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
    from popview.analysis.cfg.timeline import CfgTimelineData
    from popview.gui.cfgviews import on_threads

    trace = shared_traces / "popview-heat" / "extrae" / "hyb_2x2" / "hyb_2x2.prv"
    view = read_cfg(shared_traces / "paraver-cfgs" / "parami" / "cfgs" / "General" / "views" / "state_as_is.cfg")
    with popview.open(trace, cache_dir=tmp_path, timeline=True) as exp:
        columns = TraceColumns.from_cache(exp.reader, exp.definitions)
        (window,) = tl.shown_windows(view)
        t = tl.window_timeline(view, window, on_threads(evaluate_window(view, 1, columns), window, columns),
                               columns.t_end)
        data = CfgTimelineData(exp, t)
        rows = np.arange(t.n_rows)
        near = data.picture(data.mode, rows, 0, columns.t_end, 400_000).values
        far = data.picture(data.mode, rows, 0, columns.t_end, 800).values
        idle_near, idle_far = (near == 0).mean(axis=1), (far == 0).mean(axis=1)
        assert (idle_near[[1, 3]] > 0.7).all()
        np.testing.assert_allclose(idle_far, idle_near, atol=0.02)
