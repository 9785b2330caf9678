"""The timeline pyramid: dominant values and shares per power-of-two bin, tiles."""
from __future__ import annotations

import numpy as np
import pytest

from popview.cache import Progress, Reader, Writer, pyramid
from popview.model.definitions import Definitions, EventType, Location, Process

MPI, INS = 50000001, 42000050


def make_cache(path, states, events, t_end, n_loc=2, extra_counters=None, value_types=None):
    defs = Definitions(source_format="paraver", t_end=t_end)
    defs.processes = [Process("rank 0", 0)]
    defs.locations = [Location(f"t{i}", 0, i) for i in range(n_loc)]
    defs.event_types = {MPI: EventType(MPI, "MPI Point-to-point", "region", {1: "MPI_Send", 2: "MPI_Recv"},
                                       paradigm="mpi"),
                        INS: EventType(INS, "PAPI_TOT_INS", "counter")}
    defs.counters = ["PAPI_TOT_INS"]
    for code, name in (extra_counters or {}).items():
        defs.event_types[code] = EventType(code, name, "counter", value_type=(value_types or {}).get(code, "int"))
        defs.counters.append(name)
    w = Writer(path, "test", n_loc)
    w.append("states", {k: np.asarray(v) for k, v in states.items()})
    if events:
        w.append("events", {k: np.asarray(v) for k, v in events.items()})
    w.set_definitions(defs)
    w.finish()
    return Reader(path)


@pytest.fixture(autouse=True)
def all_levels(monkeypatch):
    monkeypatch.setattr(pyramid, "COARSEST_BINS", 1)   # keep levels down to one bin in these tiny traces


@pytest.fixture
def small(tmp_path):
    # loc 0: Running [0,300) MPI-wait [300,400) Running [400,1024); loc 1: Running all along
    states = {"loc": [0, 0, 0, 1], "begin": [0, 300, 400, 0], "end": [300, 400, 1024, 1024], "state": [1, 3, 1, 1]}
    events = {"loc": [0, 0, 0, 0, 1], "time": [300, 300, 400, 1024, 512], "type": [INS, MPI, MPI, INS, INS],
              "value": [600, 1, 0, 1248, 50]}
    with make_cache(tmp_path / "c.h5", states, events, 1024) as reader:
        yield reader


def level(reader, channel, k):
    g = reader.timeline()[channel][str(k)]
    return g["value"][:], (g["share"][:] if "share" in g else None)


def test_geometry_is_powers_of_two(small):
    g = small.timeline()
    assert g.attrs["base_ns"] == 1          # 1024 ns at <= 16384 bins
    widths = [int(g.attrs["base_ns"]) << k for k in range(int(g.attrs["n_levels"]))]
    bins = [small.timeline()["state"][str(k)]["value"].shape[1] for k in range(len(widths))]
    assert [w * b for w, b in zip(widths, bins)] == [1024] * len(widths)
    assert bins[-1] == 1


def test_state_dominant_and_share_exact(small):
    # level 8: bins of 256 ns -> [0,256) [256,512) [512,768) [768,1024)
    value, share = level(small, "state", 8)
    assert value.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1]]
    # bin 1 of loc 0: Running 44 + 112 = 156 ns of 256, MPI 100 ns
    assert share[0].tolist() == [255, round(156 / 256 * 255), 255, 255]
    # level 7 (128 ns): bin 2 = [256,384): Running 44, MPI 84 -> MPI dominant with 84/128
    value, share = level(small, "state", 7)
    assert value[0, 2] == 3 and share[0, 2] == round(84 / 128 * 255)
    assert value[0, 3] == 1 and share[0, 3] == round(112 / 128 * 255)   # [384,512): MPI 16, Running 112


def test_mpi_channel_is_non_null_dominant(small):
    value, share = level(small, "mpi", 8)
    cp = value[0, 1]
    assert cp >= 0 and small.definitions.callpath_name(int(cp)) == "MPI_Send"
    assert share[0, 1] == round(100 / 256 * 255)
    assert (value[0, [0, 2, 3]] == pyramid.NONE).all() and (value[1] == pyramid.NONE).all()


def test_useful_duration_is_longest_burst(small):
    value, _ = level(small, "useful", 8)
    assert value[0].tolist() == [300, 624, 624, 624]    # bin 1 overlaps both bursts
    assert value[1].tolist() == [1024] * 4


def test_counter_sums_spread_over_intervals(small):
    value, _ = level(small, f"counter_{INS}", 9)        # two bins of 512 ns
    # loc 0: 600 over [0,300), 1248 over [300,1024): 212/724 of it in bin 0
    assert value[0, 0] == pytest.approx(600 + 1248 * 212 / 724, rel=1e-6)
    assert value[0, 1] == pytest.approx(1248 * 512 / 724, rel=1e-6)
    assert value[1].tolist() == [50, 0] or (value[1, 0] == 50 and np.isnan(value[1, 1]))


def test_tiles_group_records_by_block_then_location(small):
    t = small.timeline()["tiles"]["state"]
    offsets = t["offsets"][:]
    assert offsets.shape == (1, 3)                      # 4 records: one block
    assert t["loc"][:].tolist() == [0, 0, 0, 1]
    assert t["value"][:].tolist() == [1, 3, 1, 1]


def test_flatten_calls_keeps_innermost():
    # loc 0: a [0,100) containing b [10,20) and c [30,40) containing d [32,35)
    loc = np.zeros(4, np.int32)
    begin = np.array([0, 10, 30, 32])
    end = np.array([100, 20, 40, 35])
    cp = np.array([0, 1, 2, 3], np.int32)
    l, b, e, v = pyramid.flatten_calls(loc, begin, end, cp)
    pieces = list(zip(b.tolist(), e.tolist(), v.tolist()))
    assert pieces == [(0, 10, 0), (10, 20, 1), (20, 30, 0), (30, 32, 2), (32, 35, 3), (35, 40, 2), (40, 100, 0)]


def test_dominance_on_random_trace_matches_brute_force(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    dur = rng.integers(1, 60, n)
    end = np.cumsum(dur)
    begin = end - dur
    state = rng.integers(1, 5, n)
    t_end = int(end[-1])
    with make_cache(tmp_path / "r.h5", {"loc": np.zeros(n, int), "begin": begin, "end": end, "state": state},
                    None, t_end, n_loc=1) as reader:
        g = reader.timeline()
        base = int(g.attrs["base_ns"])
        for k in (3, 5):
            width = base << k
            value, share = level(reader, "state", k)
            for b in range(value.shape[1]):
                lo, hi = b * width, (b + 1) * width
                cover = np.clip(np.minimum(end, hi) - np.maximum(begin, lo), 0, None)
                totals = np.bincount(state, weights=cover, minlength=5)
                assert totals[value[0, b]] == totals.max()
                assert share[0, b] == round(totals.max() / width * 255)


def test_rebuild_replaces_the_group(small):
    import h5py
    path, defs = small.path, small.definitions
    small.close()
    with h5py.File(path, "r+") as out:
        pyramid.build(out, defs, Progress())
        assert sorted(out["pyramid"]["tiles"]) == ["callpath", f"counter_{INS}", "state"]


@pytest.mark.parametrize("timeline", [False, True])
def test_a_cache_without_records_has_no_timeline(tmp_path, timeline):
    defs = Definitions(source_format="cube")
    defs.processes = [Process("rank 0", 0)]
    defs.locations = [Location("t0", 0, 0)]
    defs.counters = ["PAPI_TOT_INS"]
    w = Writer(tmp_path / "p.h5", "test", 1, timeline=timeline)
    w.set_definitions(defs)
    w.finish()
    with Reader(tmp_path / "p.h5") as reader:
        assert reader.timeline() is None and reader.group(pyramid.GROUP) is None
    assert [p.name for p in tmp_path.iterdir()] == ["p.h5"], "no timeline overview file for a profile"


def test_an_empty_pyramid_for_a_source_without_records(tmp_path):
    """pyramid.build itself on a cache without records: the group, without channels."""
    import h5py

    defs = Definitions(source_format="cube")
    defs.processes = [Process("rank 0", 0)]
    defs.locations = [Location("t0", 0, 0)]
    w = Writer(tmp_path / "p.h5", "test", 1)
    w.set_definitions(defs)
    w.finish()
    with h5py.File(tmp_path / "p.h5", "r") as src, h5py.File(tmp_path / "t.h5", "w") as dst:
        pyramid.build(src, defs, Progress(), dst=dst)
        g = dst["pyramid"]
        assert g.attrs["channels"] == "" and g.attrs["numeric"] == "" and len(g) == 0


@pytest.mark.parametrize("in_order", [True, False])
def test_tile_blocks_of_records_as_the_division_gives_them(in_order):
    """count_blocks and scatter_tiles reuse the last record's block instead of dividing:
    every record still lands in exactly the blocks [begin // w, max(end - 1, begin) // w]
    (clipped), in order or not, before time 0 or past the last block."""
    from popview.cache.pyramid import count_blocks, scatter_tiles

    rng = np.random.default_rng(11 + in_order)
    for _ in range(20):
        n, n_loc = int(rng.integers(1, 3000)), 3
        loc = np.sort(rng.integers(0, n_loc, n)).astype(np.int32)
        begin = rng.integers(-500, 20_000, n)
        if in_order:
            begin = np.concatenate([np.sort(begin[loc == k]) for k in range(n_loc)])
        end = begin + rng.integers(-5, 3000, n)
        width, n_blocks = int(rng.integers(1, 2500)), int(rng.integers(1, 12))
        first = np.clip(begin // width, 0, n_blocks - 1)
        last = np.clip(np.maximum(end - 1, begin) // width, 0, n_blocks - 1)
        expected = np.zeros(n_blocks * n_loc, np.int64)
        for i in range(n):
            expected[np.arange(first[i], last[i] + 1) * n_loc + loc[i]] += 1
        counts = np.zeros(n_blocks * n_loc, np.int64)
        count_blocks(loc, begin, end, width, n_blocks, n_loc, counts)
        np.testing.assert_array_equal(counts, expected)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).reshape(n_blocks, n_loc)
        out = [np.full(int(counts.sum()), -1, dt) for dt in (np.int32, np.int64, np.int64, np.int64)]
        assert scatter_tiles(loc, begin, end, begin, width, n_blocks, starts.copy(), 0, *out) == counts.sum()
        for k in range(n_blocks):
            for j in range(n_loc):
                got = out[1][starts[k, j]:starts[k, j] + counts[k * n_loc + j]]
                want = begin[(loc == j) & (first <= k) & (last >= k)]
                np.testing.assert_array_equal(got, want)


def test_a_counter_of_some_locations_fills_only_their_rows(tmp_path):
    """Rows of locations without readings stay NaN at every level, and the others are what
    reducing and pairing every row gives (only the rows with readings are computed: each
    metric of the mi300 OTF2 archive is read on one location of 32)."""
    rng = np.random.default_rng(3)
    t_end = 4096
    states = {"loc": [0, 1, 2, 3], "begin": [0] * 4, "end": [t_end] * 4, "state": [1] * 4}
    times = np.sort(rng.integers(1, t_end, 40))
    events = {"loc": [2] * 40, "time": times.tolist(), "type": [INS] * 40, "value": rng.integers(0, 1000, 40).tolist()}
    with make_cache(tmp_path / "c.h5", states, events, t_end, n_loc=4) as reader:
        g = reader.timeline()
        base, n_levels = int(g.attrs["base_ns"]), int(g.attrs["n_levels"])
        bins = [g[f"counter_{INS}"][str(k)]["value"].shape[1] for k in range(n_levels)]
        prev = np.r_[0, times[:-1]]
        dense = np.full((4, bins[0]), np.nan)
        pyramid.reduce_kernel(np.array([2], np.int64), np.array([0], np.int64), np.array([40], np.int64),
                              np.array([np.iinfo(np.int64).min]), prev, times,
                              np.asarray(events["value"], np.float64), 0.0, float(base), bins[0], True, dense)
        for k in range(n_levels):
            if k:
                if dense.shape[1] % 2:
                    dense = np.pad(dense, ((0, 0), (0, 1)), constant_values=np.nan)
                dense = pyramid._pair_bins(dense[:, 0::2], dense[:, 1::2], True)[:, : bins[k]]
            got = g[f"counter_{INS}"][str(k)]["value"][:]
            np.testing.assert_array_equal(got, dense.astype(np.float32), err_msg=f"level {k}")
            assert np.isnan(got[[0, 1, 3]]).all() and not np.isnan(got[2]).all()
