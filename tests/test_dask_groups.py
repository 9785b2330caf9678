"""The pieces of the finish on Dask (popview.cache.groups) that need no cluster: rows gathered
from several sources as one staging would give them, group windows joined into one dataset
with whole chunks copied as stored, raw segments read as one column, call-path tables of
groups merged into the numbering of one builder."""
from __future__ import annotations

import pickle

import h5py
import numpy as np
import pytest

from popview.cache import schema
from popview.cache.chunks import ChunkedWriter
from popview.cache.chunks import copy_rows, write_window
from popview.cache.groups import _CallPathMerge, _local_call_paths, gather_sources, slice_sources
from popview.cache.rawtables import RawTables, SortedCopy
from popview.cache.writer import PreparedChunk, _Staging, create_column
from popview.model.definitions import Definitions, EventType, Region


def _chunk(rng, n, n_loc, t0):
    loc = rng.integers(0, n_loc, n).astype(np.int32)
    return {"loc": loc, "begin": t0 + np.arange(n, dtype=np.int64), "end": t0 + np.arange(n, dtype=np.int64) + 5,
            "state": rng.integers(0, 9, n).astype(np.int32)}


def test_rows_gathered_from_several_sources_as_one_staging_gives_them(tmp_path):
    rng = np.random.default_rng(3)
    n_loc = 9
    one = _Staging(tmp_path, "states")                  # everything appended to one spill
    sources = []
    for s in range(4):                                  # ... or spilled by four tasks
        folder = tmp_path / f"piece{s}"
        folder.mkdir()
        piece = _Staging(folder, "states")
        for c in range(3):
            chunk = PreparedChunk("states", _chunk(rng, int(rng.integers(1, 400)), n_loc, 1000 * (3 * s + c)))
            one.append(chunk)
            piece.append(chunk)
        piece.close()
        sources.append(({k: str(v) for k, v in piece.paths.items()}, piece.own_chunks))
    runs = one.runs(n_loc)
    for a, b in [(0, n_loc), (2, 5), (4, 5), (8, 9)]:
        expected = one.gather(runs, a, b)
        got = gather_sources("states", slice_sources(sources, n_loc, [(a, b)])[0], a, b)
        for name, _ in schema.columns("states"):
            assert np.array_equal(got[name], expected[name]), (a, b, name)


@pytest.mark.parametrize("cuts", [[0, 70_000, 140_000, 200_000], [0, 5, 131_072, 131_080, 200_000],
                                  [0, 65_536, 200_000], [0, 200_000]])
def test_group_windows_joined_equal_the_dataset_written_at_once_whole_chunks_as_stored(tmp_path, cuts):
    rng = np.random.default_rng(7)
    rows = rng.integers(-2**40, 2**40, cuts[-1])
    with h5py.File(tmp_path / "once.h5", "w") as f:
        once = create_column(f, "c", np.int64, len(rows))
        sink = ChunkedWriter(once)
        sink.write(rows)
        sink.close()
        with h5py.File(tmp_path / "joined.h5", "w") as g:
            joined = create_column(g, "c", np.int64, len(rows))
            for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
                with h5py.File(tmp_path / f"group{i}.h5", "w") as part:
                    window = create_column(part, "c", np.int64, len(rows))
                    write_window(window, lo, rows[lo:hi])
                    copy_rows(window, joined, lo, hi)
            assert np.array_equal(joined[:], rows)
            c = once.chunks[0]
            for k in range(0, len(rows), c):
                inside = any(lo <= k and min(k + c, len(rows)) <= hi for lo, hi in zip(cuts[:-1], cuts[1:]))
                if inside:       # a chunk of one group is the bytes the one-machine writer stores
                    assert joined.id.read_direct_chunk((k,)) == once.id.read_direct_chunk((k,))


def test_raw_segments_read_as_one_column(tmp_path):
    rng = np.random.default_rng(1)
    sizes = [5, 0, 17, 3]
    parts = [rng.integers(0, 100, n).astype(np.int64) for n in sizes]
    segments = []
    for k, part in enumerate(parts):
        files = {}
        for name, dtype in schema.columns("events"):
            files[name] = tmp_path / f"seg{k}.{name}"
            (part if name == "time" else np.zeros(len(part), dtype)).astype(dtype).tofile(files[name])
        segments.append(files)
    copy = SortedCopy(tmp_path / "sorted")
    total = sum(sizes)
    copy.adopt_segments("events", segments, sizes, np.array([0, total]))
    column = RawTables(tmp_path / "sorted")["events"]["time"]
    whole = np.concatenate(parts)
    assert len(column) == total and np.array_equal(column[:], whole)
    for lo in range(total + 1):
        for hi in range(lo, total + 1):
            assert np.array_equal(column[lo:hi], whole[lo:hi])


def _defs() -> Definitions:
    d = Definitions()
    d.event_types[60000019] = EventType(code=60000019, name="User function", kind="region",
                                        values={1: "main", 2: "solve", 3: "exchange"})
    d.regions = [Region(name=n, paradigm="user", role="function", event_type=60000019, event_value=v)
                 for v, n in ((1, "main"), (2, "solve"))]        # 3 is named by its type, 4 and 5 are not
    d.t_end = 10_000
    return d


def _events(locs: list[int], seed: int) -> dict[str, np.ndarray]:
    """Nested enter/leave events of user functions on each location, values 1-5 (4 and 5
    undeclared), in time order per location."""
    rng = np.random.default_rng(seed)
    out = {k: [] for k in ("loc", "time", "type", "value")}
    for loc in locs:
        t, stack = 0, []
        for _ in range(40):
            t += int(rng.integers(1, 20))
            if stack and rng.random() < 0.45:
                stack.pop()
                value = 0
            else:
                value = int(rng.integers(1, 6))
                stack.append(value)
            for k, v in (("loc", loc), ("time", t), ("type", 60000019), ("value", value)):
                out[k].append(v)
    return {"loc": np.array(out["loc"], np.int32), "time": np.array(out["time"], np.int64),
            "type": np.array(out["type"], np.int32), "value": np.array(out["value"], np.int64)}


def test_call_paths_of_groups_merged_number_them_as_one_builder(tmp_path):
    from popview.cache.derived import CallPathCollector

    groups = [_events([0, 1], 1), _events([2], 2), _events([3, 4, 5], 3)]
    one = _defs()
    serial = CallPathCollector(one)
    for events in groups:
        serial.add(events)
    merged_defs = _defs()
    merge = _CallPathMerge(merged_defs)
    blob = pickle.dumps(merged_defs)
    for events in groups:                       # each group on its own copy of the definitions
        merge.add(_local_call_paths(pickle.loads(blob), events))
    parallel = merge.collector()
    assert [(r.name, r.event_value) for r in merged_defs.regions] == [(r.name, r.event_value) for r in one.regions]
    assert len(one.regions) > 2 and any(r.event_value in (4, 5) for r in one.regions)
    for got, expected in zip(parallel.builder.table(), serial.builder.table()):
        assert np.array_equal(got, expected)
    assert parallel.builder.unmatched == serial.builder.unmatched
    assert len(parallel.parts) == len(serial.parts)
    for p, s in zip(parallel.parts, serial.parts):
        for k in s:
            assert np.array_equal(p[k], s[k]), k
    assert np.array_equal(np.concatenate(parallel.builder.unclosed), np.concatenate(serial.builder.unclosed))


def test_rows_of_a_two_dimensional_dataset_joined_by_chunk_rows(tmp_path):
    """The pyramid's levels: chunks of (64 locations, 1024 bins); groups of locations."""
    from popview.cache.writer import compression

    rng = np.random.default_rng(5)
    values = rng.integers(-5, 100, (300, 2500)).astype(np.int32)
    cuts = [0, 64, 100, 101, 256, 300]
    with h5py.File(tmp_path / "joined.h5", "w") as g:
        joined = g.create_dataset("v", shape=values.shape, dtype=np.int32, chunks=(64, 1024), fillvalue=-1,
                                  **compression())
        for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
            with h5py.File(tmp_path / f"part{i}.h5", "w") as f:
                part = f.create_dataset("v", shape=values.shape, dtype=np.int32, chunks=(64, 1024), fillvalue=-1,
                                        **compression())
                part[lo:hi] = values[lo:hi]
                copy_rows(part, joined, lo, hi)
        assert np.array_equal(joined[:], values)


@pytest.mark.parametrize("cuts", [[0, 1, 2, 3, 300], [0, 64, 128, 300], [0, 10, 64, 70, 199, 300]])
def test_windows_joined_at_once_write_a_shared_chunk_once(tmp_path, cuts):
    from popview.cache.chunks import join_rows
    from popview.cache.writer import compression

    rng = np.random.default_rng(11)
    values = rng.random((300, 1500)).astype(np.float32)
    files, windows = [], []
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        f = h5py.File(tmp_path / f"part{i}.h5", "w")
        part = f.create_dataset("v", shape=values.shape, dtype=np.float32, chunks=(64, 1024), fillvalue=np.nan,
                                **compression())
        part[lo:hi] = values[lo:hi]
        files.append(f)
        windows.append((part, lo, hi))
    with h5py.File(tmp_path / "joined.h5", "w") as g:
        joined = g.create_dataset("v", shape=values.shape, dtype=np.float32, chunks=(64, 1024), fillvalue=np.nan,
                                  **compression())
        join_rows(joined, windows)
        assert np.array_equal(joined[:], values)
    for f in files:
        f.close()


def test_parts_that_fill_no_chunk_are_joined_from_unfiltered_files(tmp_path):
    """A pyramid part whose locations fill no chunk of 64 writes its rows without filters
    (pyramid._create_levels): the join gathers and compresses every chunk once."""
    from popview.cache.chunks import join_rows
    from popview.cache.writer import compression

    rng = np.random.default_rng(2)
    values = rng.integers(0, 255, (50, 3000)).astype(np.uint8)
    cuts = [0, 1, 17, 49, 50]
    files, windows = [], []
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        f = h5py.File(tmp_path / f"part{i}.h5", "w")
        part = f.create_dataset("v", shape=values.shape, dtype=np.uint8, chunks=(50, 1024))
        part[lo:hi] = values[lo:hi]
        files.append(f)
        windows.append((part, lo, hi))
    with h5py.File(tmp_path / "joined.h5", "w") as g:
        joined = g.create_dataset("v", shape=values.shape, dtype=np.uint8, chunks=(50, 1024), **compression())
        join_rows(joined, windows)
        assert np.array_equal(joined[:], values)
        assert joined.id.get_create_plist().get_nfilters() == 3       # shuffle, zstd, fletcher32, as stored
    for f in files:
        f.close()
