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
