"""The cache: reuse, invalidation, atomicity, window reads."""
import os
import threading
import time

import numpy as np
import pytest

import popview
from popview.cache import Cancelled, schema
from popview.cache.reader import Reader, open_if_valid
from tests.paraver.prvtext import write_trace


def test_second_open_reuses_the_cache(tmp_path, cache_dir):
    prv = write_trace(tmp_path)
    with popview.open(prv, cache_dir=cache_dir) as a:
        assert a.converted
    with popview.open(prv, cache_dir=cache_dir) as b:
        assert not b.converted


def test_changed_source_reconverts(tmp_path, cache_dir):
    prv = write_trace(tmp_path)
    popview.open(prv, cache_dir=cache_dir).close()
    text = prv.read_text().replace("1:1:1:1:1:0:600:1", "1:1:1:1:1:0:500:1")
    prv.write_text(text)
    os.utime(prv, ns=(time.time_ns(), time.time_ns() + 10**9))
    with popview.open(prv, cache_dir=cache_dir) as exp:
        assert exp.converted
        assert exp.reader.read("states")["end"][0] == 500


def test_changed_pcf_reconverts(tmp_path, cache_dir):
    prv = write_trace(tmp_path)
    popview.open(prv, cache_dir=cache_dir).close()
    pcf = prv.with_suffix(".pcf")
    pcf.write_text(pcf.read_text().replace("MPI_Allreduce", "MPI_Allreduce_renamed"))
    with popview.open(prv, cache_dir=cache_dir) as exp:
        assert exp.converted
        assert any(r.name == "MPI_Allreduce_renamed" for r in exp.definitions.regions)


def test_other_schema_or_incomplete_cache_is_not_trusted(tmp_path, cache_dir):
    prv = write_trace(tmp_path)
    with popview.open(prv, cache_dir=cache_dir) as exp:
        path = exp.cache_path
    import h5py
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = schema.SCHEMA_VERSION - 1
    assert open_if_valid(path, None) is None
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = schema.SCHEMA_VERSION
        f.attrs["complete"] = False
    assert open_if_valid(path, None) is None
    path.write_bytes(b"garbage")
    assert open_if_valid(path, None) is None
    with popview.open(prv, cache_dir=cache_dir) as exp:
        assert exp.converted


def test_cancelled_conversion_leaves_nothing(tmp_path, cache_dir):
    prv = write_trace(tmp_path)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        popview.open(prv, cache_dir=cache_dir, cancel=cancel)
    assert os.listdir(cache_dir) == []


def test_failure_during_finish_leaves_nothing(tmp_path, cache_dir, monkeypatch):
    from popview.cache import cumulative, derived

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(derived, "build_all", boom)
    monkeypatch.setattr(cumulative.Ahead, "write", boom)      # the default finish's sums (writer._sums_beside_calls)
    with pytest.raises(RuntimeError):
        popview.open(write_trace(tmp_path), cache_dir=cache_dir)
    assert os.listdir(cache_dir) == []


def test_progress_reaches_one(tmp_path, cache_dir):
    seen = []
    popview.open(write_trace(tmp_path), cache_dir=cache_dir, progress=lambda f, m: seen.append(f)).close()
    assert seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
    assert seen == sorted(seen)


def _random_intervals(rng, n_loc, n):
    body = []
    truth = []
    for loc in range(n_loc):
        t = 0
        for _ in range(n):
            d = int(rng.integers(1, 50))
            body.append(f"1:{loc + 1}:1:{loc + 1}:1:{t}:{t + d}:{int(rng.integers(0, 3))}")
            truth.append((loc, t, t + d))
            t += d + int(rng.integers(0, 5))
    return body, truth, t


def test_window_reads_match_a_full_scan(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(schema, "SPARSE_STEP", 16)
    rng = np.random.default_rng(1)
    body, truth, t_end = _random_intervals(rng, 3, 400)
    header = f"#Paraver (d):{t_end + 100}_ns:1(3):1:3(1:1,1:1,1:1),0\n"
    prv = write_trace(tmp_path, body="\n".join(body) + "\n", header=header, pcf=None, row=None)
    with popview.open(prv, cache_dir=cache_dir) as exp:
        for _ in range(40):
            t0 = int(rng.integers(0, t_end))
            t1 = t0 + int(rng.integers(1, 2000))
            loc = int(rng.integers(0, 3))
            got = exp.reader.read("states", locations=[loc], t0=t0, t1=t1)
            want = [(b, e) for l, b, e in truth if l == loc and b < t1 and e > t0]
            assert list(zip(got["begin"].tolist(), got["end"].tolist())) == want


def test_sorting_in_small_location_groups_matches_one_group(tmp_path, monkeypatch):
    from popview.cache import writer

    rng = np.random.default_rng(7)
    body, _, t_end = _random_intervals(rng, 3, 50)
    lines = body.copy()
    rng.shuffle(lines)                      # out of order within and across locations
    header = f"#Paraver (d):{t_end + 100}_ns:1(3):1:3(1:1,1:1,1:1),0\n"
    prv = write_trace(tmp_path, body="\n".join(lines) + "\n", header=header, pcf=None, row=None)
    with popview.open(prv, cache_dir=tmp_path / "one") as exp:
        whole = exp.reader.read("states")
    monkeypatch.setattr(writer, "SORT_BUDGET_ROWS", 40)   # several groups, bucketed on disk
    with popview.open(prv, cache_dir=tmp_path / "many") as exp:
        grouped = exp.reader.read("states")
        assert exp.reader.counts_per_location("states").tolist() == [50, 50, 50]
    for col in whole:
        assert np.array_equal(whole[col], grouped[col]), col
    assert np.all(np.diff(grouped["begin"][:50]) > 0)


@pytest.mark.parametrize("arrival", ["in order", "locations interleaved", "time reversed in a location",
                                     "a location comes back later"])
def test_rows_come_out_sorted_whatever_their_arrival(tmp_path, monkeypatch, arrival):
    """Rows already in (location, time) order are copied; any other order is sorted."""
    from popview.cache import Progress, Writer, writer
    from popview.model.definitions import Definitions, Location, Process

    monkeypatch.setattr(writer, "SORT_BUDGET_ROWS", 7)      # copies and sorts in several slabs
    loc = np.repeat([0, 1, 2], 10)
    begin = np.tile(np.arange(10) * 10, 3)
    order = {"in order": np.arange(30),
             "locations interleaved": np.argsort(begin, kind="stable"),
             "time reversed in a location": np.r_[np.arange(10), np.arange(19, 9, -1), np.arange(20, 30)],
             "a location comes back later": np.r_[np.arange(5), np.arange(10, 30), np.arange(5, 10)]}[arrival]
    defs = Definitions(source_format="paraver", t_end=200)
    defs.processes = [Process("rank 0", 0)]
    defs.locations = [Location(f"t{i}", 0, i) for i in range(3)]
    w = Writer(tmp_path / "c.h5", "test", 3)
    for chunk in np.array_split(order, 4):
        w.append("states", {"loc": loc[chunk], "begin": begin[chunk], "end": begin[chunk] + 5,
                            "state": np.ones(len(chunk), int)})
    w.set_definitions(defs)
    messages = []
    w.finish(Progress(lambda f, m: messages.append(m)))
    with Reader(tmp_path / "c.h5") as r:
        got = r.read("states")
    assert got["loc"].tolist() == loc.tolist() and got["begin"].tolist() == begin.tolist()
    assert ("wrote states" in messages) == (arrival == "in order")     # copied, not sorted


@pytest.mark.parametrize("times", ["in time order", "shuffled"])
def test_rows_of_equal_time_keep_their_arrival_order(tmp_path, monkeypatch, times):
    """Several events at one timestamp (an MPI call's entry and its counters) keep the
    order they arrived in, across chunks and location groups."""
    from popview.cache import Progress, Writer, writer
    from popview.model.definitions import Definitions, Location, Process

    monkeypatch.setattr(writer, "SORT_BUDGET_ROWS", 500)
    rng = np.random.default_rng(3)
    n, n_loc = 5000, 7
    loc = rng.integers(0, n_loc, n)
    time = np.sort(rng.integers(0, 300, n)) if times == "in time order" else rng.integers(0, 300, n)
    seq = np.arange(n)                          # arrival rank, as the value
    defs = Definitions(source_format="paraver", t_end=400)
    defs.processes = [Process("rank 0", 0)]
    defs.locations = [Location(f"t{i}", 0, i) for i in range(n_loc)]
    w = Writer(tmp_path / "e.h5", "test", n_loc)
    for chunk in np.array_split(np.arange(n), 9):
        w.append("events", {"loc": loc[chunk], "time": time[chunk], "type": np.ones(len(chunk), int),
                            "value": seq[chunk]})
    w.set_definitions(defs)
    w.finish(Progress())
    want = np.lexsort((seq, time, loc))        # by location, time, then arrival
    with Reader(tmp_path / "e.h5") as r:
        got = r.read("events")
    assert got["value"].tolist() == seq[want].tolist()
