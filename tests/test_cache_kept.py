"""Staged rows kept in memory instead of spilled (popview/cache/kept.py): the OTF2
reader's rows are written and summed where they are kept, never through the spill
files, and the cache is the one the spill gives; past the budget, or for a side
process, they are written out and the rest spilled; what reads them never changes
them (the tables are written from the same arrays the sums read, at the same time)."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.cache import kept
from popview.cache.rawtables import RawTables, SortedCopy
from popview.readers.otf2 import conversion
from popview.testing.otf2_writer import write_openmp_trace, write_trace
from tests.cachecompare import differences


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("otf2-kept")
    write_trace(d / "mpi", ranks=4, iterations=60)
    write_openmp_trace(d / "omp", ranks=2, threads=3, iterations=4)
    return {"mpi": d / "mpi" / "traces.otf2", "omp": d / "omp" / "traces.otf2"}


@pytest.fixture
def compiled(monkeypatch):
    """Small archives run their kernels as Python: compiled here, as big ones are (the
    sums are then built beside the tables, reading the kept rows)."""
    from popview import readers

    monkeypatch.setattr(readers.otf2, "INTERPRETED_BYTES", 0)


def _convert(archive, folder, **options):
    with popview.open(archive, cache_dir=folder, **options) as exp:
        return exp.cache_path


@pytest.mark.parametrize("name", ["mpi", "omp"])
def test_otf2_rows_are_kept_and_give_the_spilled_cache(archives, tmp_path, monkeypatch, compiled, spill_writes, name):
    kept_cache = _convert(archives[name], tmp_path / "kept")
    assert spill_writes == [], f"spilled: {sorted(set(spill_writes))}"
    monkeypatch.setattr(conversion, "KEEP_ROWS_BYTES", 0)
    spilled_cache = _convert(archives[name], tmp_path / "spilled")
    assert {"states", "events", "calls"} <= set(spill_writes)
    assert differences(kept_cache, spilled_cache) == []


@pytest.mark.parametrize("name", ["mpi", "omp"])
def test_what_reads_the_kept_rows_never_changes_them(archives, tmp_path, monkeypatch, compiled, name):
    """The tables' writer and the cumulative sums read slices of the kept arrays, not copies,
    in two threads at once: a change by either would reach the other (and the cache)."""
    appended = []
    real = kept.KeptColumn.append

    def append(self, values):
        appended.append((values, values.copy()))
        real(self, values)

    monkeypatch.setattr(kept.KeptColumn, "append", append)
    done = []
    real_done = RawTables.done_reading
    monkeypatch.setattr(RawTables, "done_reading", lambda self: done.append(self.sole_reader) or real_done(self))
    _convert(archives[name], tmp_path / "c")
    assert appended and done == [True]        # the sums read slices, beside the tables
    changed = [i for i, (now, before) in enumerate(appended) if not np.array_equal(now, before)]
    assert changed == []


def test_the_budget_passed_spills_what_was_kept_then_the_rest(archives, tmp_path, monkeypatch, compiled,
                                                              spill_writes):
    gave_up = []
    real = kept.Budget.give_up
    monkeypatch.setattr(kept.Budget, "give_up", lambda self: gave_up.append(self.used) or real(self))
    monkeypatch.setattr(conversion, "KEEP_ROWS_BYTES", 0)
    spilled_cache = _convert(archives["mpi"], tmp_path / "spilled")
    assert gave_up == []                     # nothing kept: nothing to give up
    spill_writes.clear()
    monkeypatch.setattr(conversion, "KEEP_ROWS_BYTES", 40_000)      # a location and a half or so
    half_cache = _convert(archives["mpi"], tmp_path / "half")
    assert len(gave_up) == 1 and 0 < gave_up[0] <= 40_000
    assert {"states", "events", "calls"} <= set(spill_writes)
    assert differences(half_cache, spilled_cache) == []


def test_a_side_process_reads_the_kept_rows_written_out(archives, tmp_path, monkeypatch, compiled):
    """The timeline overview's builder runs in another process, which reads files."""
    from popview.cache import sidecar

    if not sidecar.available():
        pytest.skip("no side process on this platform")
    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)
    gave_up = []
    real = kept.Budget.give_up
    monkeypatch.setattr(kept.Budget, "give_up", lambda self: gave_up.append(self.used) or real(self))
    with_side = _convert(archives["mpi"], tmp_path / "side", timeline=True)
    assert len(gave_up) == 1 and gave_up[0] > 0
    monkeypatch.setattr(conversion, "KEEP_ROWS_BYTES", 0)
    spilled = _convert(archives["mpi"], tmp_path / "spilled", timeline=True)
    assert differences(with_side, spilled) == []


def test_a_kept_table_adopted_reads_as_slices_and_goes_when_its_sole_reader_is_done(tmp_path):
    """Rows in time order per location, appended location by location: a location's rows
    are its kept array's slice for a sole reader (a copy for others), every slice of the
    table reads as the sorted table, and done_reading lets the arrays go."""
    from popview.cache.writer import PreparedChunk, _Staging

    budget = kept.Budget(1 << 20)
    stage = _Staging(tmp_path, "states", n_locations_hint=3, keep=budget)
    chunks = [(0, [1, 4, 6]), (1, [2, 3]), (2, [0, 5, 7, 9])]
    for loc, begins in chunks:
        n = len(begins)
        stage.append(PreparedChunk("states", {"loc": np.full(n, loc, np.int32), "begin": np.array(begins, np.int64),
                                              "end": np.array(begins, np.int64) + 1,
                                              "state": np.arange(n, dtype=np.int32)}))
    assert stage.kept is not None and budget.used == sum(len(b) for _, b in chunks) * 20
    assert all(p.stat().st_size == 0 for p in stage.paths.values())       # nothing spilled
    offsets = np.array([0, 3, 5, 9])
    copy = SortedCopy(tmp_path / "sorted")
    copy.adopt("states", stage.kept, stage.runs(3), offsets)
    first = stage.kept["begin"].parts[0]
    stage.close(remove=True)
    everything = [1, 4, 6, 2, 3, 0, 5, 7, 9]
    for sole in (False, True):
        tables = RawTables(copy.folder, copy.kept, sole_reader=sole)
        st = tables["states"]
        assert st["begin"][:].tolist() == everything
        assert st["loc"][2:6].tolist() == [0, 1, 1, 2]
        assert st["end"][4:8].tolist() == [4, 1, 6, 8]
        one = st["begin"][0:3]
        assert one.tolist() == [1, 4, 6] and np.shares_memory(one, first) is sole
    tables.done_reading()
    assert copy.kept["states"]["begin"].parts == []
