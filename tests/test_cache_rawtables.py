"""The raw sorted copy the derived builders read reads back what was written."""
from __future__ import annotations

import numpy as np
import pytest

from popview.cache import schema
from popview.cache.rawtables import RawTables, SortedCopy


def _states(locs, begins):
    n = len(locs)
    return {"loc": np.asarray(locs, np.int32), "begin": np.asarray(begins, np.int64),
            "end": np.asarray(begins, np.int64) + 5, "state": np.arange(n, dtype=np.int32)}


def test_columns_read_back_by_slices_across_appended_pieces(tmp_path):
    copy = SortedCopy(tmp_path / "sorted")
    copy.begin("states")
    copy.append("states", _states([0, 0, 1], [1, 2, 3]))
    copy.append("states", _states([2, 2], [4, 9]))
    copy.finish("states", np.array([0, 2, 3, 5]))
    tables = RawTables(tmp_path / "sorted")
    assert "states" in tables and "events" not in tables
    st = tables["states"]
    assert st["begin"].shape == (5,) and len(st["loc"]) == 5
    assert st["begin"][:].tolist() == [1, 2, 3, 4, 9]
    assert st["end"][1:4].tolist() == [7, 8, 9]
    assert st["state"][3:].dtype == dict(schema.columns("states"))["state"]
    assert st["begin"][4:4].tolist() == []
    assert st["offsets"].tolist() == [0, 2, 3, 5]
    with pytest.raises(TypeError, match="contiguous"):
        st["begin"][::2]
    with pytest.raises(KeyError):
        tables["calls"]


def test_a_table_begun_again_replaces_the_first(tmp_path):
    copy = SortedCopy(tmp_path)
    copy.begin("states")
    copy.append("states", _states([0, 0, 0], [1, 2, 3]))
    copy.finish("states", np.array([0, 3]))
    copy.begin("states")
    copy.append("states", _states([0], [7]))
    copy.finish("states", np.array([0, 1]))
    assert RawTables(tmp_path)["states"]["begin"][:].tolist() == [7]


def test_a_table_kept_in_memory_reads_as_the_one_written(tmp_path):
    """SortedCopy.keep: parts of whole locations held as they are (none written) read, by any
    slice, as the same parts written into the copy; locations without rows, empty parts too."""
    parts = [_states([0, 0, 1], [1, 2, 3]), _states([], []), _states([3, 3, 3, 4], [4, 9, 11, 12]),
             _states([6], [20])]
    offsets = np.array([0, 2, 3, 3, 6, 7, 7, 8])
    written, kept = SortedCopy(tmp_path / "written"), SortedCopy(tmp_path / "kept")
    written.begin("states")
    for p in parts:
        written.append("states", p)
    written.finish("states", offsets)
    kept.keep("states", parts, offsets)
    assert not (tmp_path / "kept" / "states.begin").exists() and "states" in kept.kept
    a, b = RawTables(tmp_path / "written")["states"], RawTables(tmp_path / "kept", kept.kept)["states"]
    assert b["offsets"].tolist() == offsets.tolist()
    for name, _ in schema.columns("states"):
        for lo in range(9):
            for hi in range(lo, 9):
                assert b[name][lo:hi].tolist() == a[name][lo:hi].tolist(), (name, lo, hi)
                assert b[name][lo:hi].dtype == a[name][lo:hi].dtype
    kept.release_kept()
    assert all(not c.parts for c in kept.kept["states"].values())


@pytest.mark.parametrize("pread_min", [0, 1 << 62])
@pytest.mark.parametrize("batch_rows", [7, 1 << 20])
def test_a_spill_adopted_with_its_run_index_reads_as_the_sorted_table(tmp_path, monkeypatch, batch_rows, pread_min):
    """Rows that arrived interleaved across locations, in time order per location,
    read back by location from the spill, for whole and partial locations, in one
    batch of runs or many, through the memory map or with one pread per run."""
    from popview.cache import runs
    from popview.cache.writer import PreparedChunk, _Staging

    monkeypatch.setattr(runs, "BATCH_ROWS", batch_rows)
    monkeypatch.setattr(runs, "PREAD_MIN_RUN_BYTES", pread_min)
    stage = _Staging(tmp_path, "states", n_locations_hint=4)
    rng = np.random.default_rng(7)
    locs = rng.choice([0, 1, 3], size=300).astype(np.int32)       # location 2 has no rows
    begins = np.arange(300, dtype=np.int64) * 10
    for a, b in ((0, 40), (40, 41), (41, 300)):
        stage.append(PreparedChunk("states", _states(locs[a:b], begins[a:b])))
    counts = np.bincount(locs, minlength=4)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    copy = SortedCopy(tmp_path / "sorted")
    copy.adopt("states", stage.paths, stage.runs(4), offsets)
    stage.close(remove=True)
    order = np.argsort(locs, kind="stable")
    state = np.concatenate([np.arange(b - a) for a, b in ((0, 40), (40, 41), (41, 300))])
    st = RawTables(tmp_path / "sorted")["states"]
    assert st["offsets"].tolist() == offsets.tolist()
    assert st["loc"][:].tolist() == locs[order].tolist()
    assert st["begin"][:].tolist() == begins[order].tolist()
    for lo, hi in ((offsets[1], offsets[2]), (offsets[3], offsets[4]), (5, 250), (offsets[1] - 3, offsets[1] + 2),
                   (17, 17)) + tuple(sorted(rng.integers(0, 301, 2)) for _ in range(40)):
        assert st["begin"][lo:hi].tolist() == begins[order][lo:hi].tolist()
        assert st["state"][lo:hi].tolist() == state[order][lo:hi].tolist()
        assert st["loc"][lo:hi].tolist() == locs[order][lo:hi].tolist()
    # a slice inside a location reads those rows only (a location's counters are read in slices)
    read = []
    real = runs.read_runs
    monkeypatch.setattr(runs, "read_runs", lambda path, starts, lengths, out: (read.append(int(lengths.sum())),
                                                                               real(path, starts, lengths, out)))
    lo = int(offsets[1]) + 5
    assert st["begin"][lo:lo + 20].tolist() == begins[order][lo:lo + 20].tolist()
    assert read == [20]
