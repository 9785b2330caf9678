"""Counters in the cumulative sums: window queries give exact values, fractions included."""
from __future__ import annotations

import numpy as np

from popview.analysis.window_index import CumulativeIndex
from popview.model.definitions import EventType
from tests.test_pyramid import INS, make_cache

ENERGY = 42009999


def _bits(values) -> np.ndarray:
    return np.asarray(values, np.float64).view(np.int64)


def test_window_sums_of_a_double_metric_keep_their_fractions(tmp_path):
    # one thread running [0, 100) and [100, 300); energy readings at the ends of both rows
    states = {"loc": [0, 0], "begin": [0, 100], "end": [100, 300], "state": [1, 1]}
    events = {"loc": [0, 0, 0, 0], "time": [100, 100, 300, 300], "type": [INS, ENERGY, INS, ENERGY],
              "value": np.r_[[1000], _bits([0.25]), [3000], _bits([0.625])]}
    reader = make_cache(tmp_path / "c.h5", states, events, 300, n_loc=1, extra_counters={ENERGY: "energy"},
                        value_types={ENERGY: "double"})
    with reader:
        index = CumulativeIndex(reader)
        col = index.counter_names.index("energy")
        (cum, ctr), = index.evaluate([(0, [50, 100, 200, 300])])
        # the reading at t belongs to the row ending at t, spread evenly over it
        assert np.allclose(ctr[:, col], [0.125, 0.25, 0.25 + 0.3125, 0.875], rtol=0, atol=1e-12)
        assert np.allclose(ctr[:, index.counter_names.index("PAPI_TOT_INS")], [500, 1000, 2500, 4000])
        assert index.ctr_totals[0, col] == 0.875


def test_integer_counters_are_unchanged_by_the_float_storage(tmp_path):
    big = 2 ** 52 + 1                      # exact in float64 still
    states = {"loc": [0], "begin": [0], "end": [10], "state": [1]}
    events = {"loc": [0], "time": [10], "type": [INS], "value": [big]}
    with make_cache(tmp_path / "c.h5", states, events, 10, n_loc=1) as reader:
        index = CumulativeIndex(reader)
        (_, ctr), = index.evaluate([(0, [10])])
        assert ctr[0, index.counter_names.index("PAPI_TOT_INS")] == big
        assert EventType(INS, "x", "counter").decode(np.array([big]))[0] == big


def test_the_timeline_pyramid_spreads_double_values_too(tmp_path):
    states = {"loc": [0, 0], "begin": [0, 100], "end": [100, 300], "state": [1, 1]}
    events = {"loc": [0, 0], "time": [100, 300], "type": [ENERGY, ENERGY], "value": _bits([0.25, 0.625])}
    with make_cache(tmp_path / "c.h5", states, events, 300, n_loc=1, extra_counters={ENERGY: "energy"},
                    value_types={ENERGY: "double"}) as reader:
        level = reader.timeline()[f"counter_{ENERGY}"]["0"]["value"][0]
        assert np.isclose(np.nansum(level), 0.875, atol=1e-6)
        tiles = reader.timeline()["tiles"][f"counter_{ENERGY}"]["value"][:]
        assert tiles.tolist() == [0.25, 0.625]


def test_the_timeline_draws_and_names_double_event_values(tmp_path):
    from popview.analysis.timeline_data import ColourMode, TimelineData

    class _Exp:
        def __init__(self, reader):
            self.reader, self.definitions = reader, reader.definitions

    states = {"loc": [0], "begin": [0], "end": [300], "state": [1]}
    events = {"loc": [0, 0], "time": [0, 150], "type": [ENERGY, ENERGY], "value": _bits([0.25, 0.625])}
    with make_cache(tmp_path / "c.h5", states, events, 300, n_loc=1, extra_counters={ENERGY: "energy"},
                    value_types={ENERGY: "double"}) as reader:
        data = TimelineData(_Exp(reader))
        pic = data.picture(ColourMode("event", ENERGY), [0], 0, 300, 2)
        assert pic.values[0].tolist() == [0.25, 0.625]
        assert data._event_value(ENERGY, int(_bits([0.625])[0])) == "0.625"


def test_readings_added_run_by_run_as_of_the_whole_location():
    """cumulative.add_readings_by_run (the events kept in memory, a run of them at a time) adds
    what add_readings adds over their concatenation, in the same order: runs cut anywhere,
    their first events at a row's begin or end, readings at those times, rows not useful."""
    from popview.cache.cumulative import add_readings, add_readings_by_run, no_reading_yet
    from popview.cache.codes import code_index

    rng = np.random.default_rng(7)
    codes, doubles = np.array([INS, ENERGY], np.int64), np.array([False, True])
    bounds = np.cumsum(rng.integers(1, 5, 400))
    begin, end = bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64)
    cat = rng.integers(0, 12, len(begin)).astype(np.int8)
    time = np.sort(np.r_[rng.integers(0, int(bounds[-1]) + 3, 3000), begin[::7], end[::5]]).astype(np.int64)
    etype = rng.choice(np.array([INS, ENERGY, 50000001], np.int32), len(time))
    value = np.where(etype == ENERGY, _bits(rng.random(len(time))), rng.integers(0, 1000, len(time)))
    whole = np.zeros((len(begin), 2))
    add_readings(code_index(etype, codes), time, value, doubles, begin, end, cat, 7, whole, no_reading_yet(2))
    cuts = np.r_[0, np.sort(rng.choice(np.arange(1, len(time)), 60, replace=False)), len(time)]
    cuts = np.r_[cuts, np.flatnonzero(np.isin(time, begin))[:20]]       # runs starting at a row's begin
    cuts = np.unique(cuts)
    runs = [(etype[a:b], time[a:b], value[a:b]) for a, b in zip(cuts[:-1], cuts[1:])] + [(etype[:0], time[:0], value[:0])]
    by_run = np.zeros_like(whole)
    add_readings_by_run(runs, codes, doubles, begin, end, cat, 7, by_run)
    assert whole.any() and np.array_equal(whole, by_run)
