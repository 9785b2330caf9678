"""A conversion's cumulative sums on two threads (cumulative._Builder._on_two_threads): each
half of the processes by a thread, the second half's `kind` rows written after the first's.
The cache equals the one built on one thread, dataset for dataset; a cancel, an interrupt or
a failure in either half leaves no thread and nothing in the cache folder."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import popview
from popview.cache import cumulative
from popview.testing import synthetic
from tests.cachecompare import assert_same_cache
from tests.test_conversion_thread_faults import _fails, _lasting, _nothing_left, _stopped_at


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sums-threads")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=5, threads=3, iterations=30, work_ns=1_000_000))
    return d / "t.prv"


@pytest.fixture
def split(monkeypatch):
    """Every conversion's sums split, whatever its size, and built after the call paths are
    written (by build(), as with the timeline overview or beside an OTF2 archive's tables);
    the halves it took listed."""
    from popview.cache import writer

    monkeypatch.setattr(writer, "SUMS_BUILDER", "none")
    taken = []
    real = cumulative._Builder._on_two_threads

    def spy(self, halves, kinds, progress):
        taken.append(halves)
        return real(self, halves, kinds, progress)

    monkeypatch.setattr(cumulative, "SPLIT_ROWS", 0)
    monkeypatch.setattr(cumulative._Builder, "_on_two_threads", spy)
    return taken


def _one_thread(patch) -> None:
    patch.setattr(cumulative._Builder, "_halves", lambda self, procs: None)


def _converted(trace, folder, monkeypatch, one_thread: bool):
    with monkeypatch.context() as patch:
        if one_thread:
            _one_thread(patch)
        with popview.open(trace, cache_dir=folder) as exp:
            return exp.cache_path, list(exp.definitions.warnings)


def test_two_threads_give_the_one_thread_cache(trace, tmp_path, monkeypatch, split):
    two, warnings_two = _converted(trace, tmp_path / "two", monkeypatch, one_thread=False)
    assert len(split) == 1, "the sums were not split"
    first, second = split[0]
    assert first and second and sorted(loc for p in first + second for loc in p) == list(range(15))
    one, warnings_one = _converted(trace, tmp_path / "one", monkeypatch, one_thread=True)
    assert len(split) == 1
    assert warnings_one == warnings_two
    assert_same_cache(one, two)


@pytest.mark.parametrize("name", ["popview-heat/extrae/hyb_2x2/hyb_2x2.prv",                  # hybrid Extrae
                                  "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",       # EPOCH, counters
                                  "profet-paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv"])
def test_two_threads_give_the_one_thread_cache_on_real_traces(shared_traces, tmp_path, monkeypatch, split, name):
    trace = shared_traces / name
    if not trace.exists():
        pytest.skip(f"{trace} is missing")
    two, warnings_two = _converted(trace, tmp_path / "two", monkeypatch, one_thread=False)
    assert split, "the sums were not split"
    one, warnings_one = _converted(trace, tmp_path / "one", monkeypatch, one_thread=True)
    assert warnings_one == warnings_two
    assert_same_cache(one, two)


def test_small_or_single_process_sums_stay_on_one_thread(trace, tmp_path, monkeypatch):
    """Below SPLIT_ROWS state rows a thread costs more than it gives."""
    taken = []
    monkeypatch.setattr(cumulative._Builder, "_on_two_threads", lambda self, *a: taken.append(1))
    with popview.open(trace, cache_dir=tmp_path / "c"):
        pass
    assert taken == []


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
def test_stopped_during_split_sums_leaves_nothing(trace, tmp_path, split, how):
    _stopped_at(trace, tmp_path / "cache", "cumulative sums", how, check=lambda: _taken(split))


@pytest.mark.parametrize("half", ["first", "second"])
def test_a_failure_in_either_half_is_raised_and_leaves_nothing(trace, tmp_path, monkeypatch, split, half):
    real = cumulative._Builder._location_rows
    seen = []

    def rows(self, loc, lo, hi, instances):
        name = threading.current_thread().name
        seen.append(name)
        if (name.startswith("popview-sums")) == (half == "second"):
            raise ValueError(f"sums of the {half} half failed")
        return real(self, loc, lo, hi, instances)

    monkeypatch.setattr(cumulative._Builder, "_location_rows", rows)
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert isinstance(exc, ValueError) and f"sums of the {half} half failed" in str(exc), exc
    assert split and (half == "first" or any(n.startswith("popview-sums") for n in seen))
    _nothing_left(before, tmp_path / "cache")


# ---- the sums computed while the call paths are written (writer.Writer._sums_beside_calls)

def _sequential(patch) -> None:
    """The finish one step after the other: calls written, then the sums built."""
    from popview.cache import writer

    patch.setattr(writer, "SUMS_BUILDER", "none")


@pytest.fixture
def ahead_taken(monkeypatch):
    from popview.cache import writer

    taken = []
    real = writer.Writer._sums_beside_calls
    monkeypatch.setattr(writer.Writer, "_sums_beside_calls", lambda self, *a: taken.append(1) or real(self, *a))
    return taken


@pytest.mark.parametrize("name", [None, "popview-heat/extrae/hyb_2x2/hyb_2x2.prv",
                                  "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
                                  "profet-paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv"])
def test_sums_beside_the_call_paths_give_the_sequential_cache(trace, shared_traces, tmp_path, monkeypatch,
                                                              ahead_taken, name):
    source = trace if name is None else shared_traces / name
    if not source.exists():
        pytest.skip(f"{source} is missing")
    monkeypatch.setattr(cumulative, "SPLIT_ROWS", 0)          # two halves, each by a thread
    ahead, warnings_ahead = _converted(source, tmp_path / "ahead", monkeypatch, one_thread=False)
    assert ahead_taken == [1]
    with monkeypatch.context() as patch:
        _sequential(patch)
        sequential, warnings_sequential = _converted(source, tmp_path / "sequential", monkeypatch, one_thread=True)
    assert ahead_taken == [1]
    assert warnings_ahead == warnings_sequential
    assert_same_cache(ahead, sequential)


def test_sums_beside_the_call_paths_give_the_same_file_every_time(trace, tmp_path, ahead_taken):
    from popview.cache import integrity

    digests = set()
    for i in range(3):
        with popview.open(trace, cache_dir=tmp_path / f"c{i}") as exp:
            digests.add(integrity.stored_digest(exp.cache_path))
    assert len(ahead_taken) == 3 and len(digests) == 1


@pytest.mark.parametrize("where", ["sums", "calls"])
def test_a_failure_beside_the_call_paths_is_raised_and_leaves_nothing(trace, tmp_path, monkeypatch, ahead_taken, where):
    from popview.cache import derived

    if where == "sums":
        monkeypatch.setattr(cumulative._Builder, "_location_rows",
                            lambda self, *a: (_ for _ in ()).throw(ValueError("the sums failed")))
    else:
        monkeypatch.setattr(derived, "_store_table", lambda *a: (_ for _ in ()).throw(ValueError("the calls failed")))
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert isinstance(exc, ValueError) and f"the {where} failed" in str(exc), exc
    assert ahead_taken
    _nothing_left(before, tmp_path / "cache")


def test_what_the_sums_read_is_let_go_of_by_a_thread_beside_the_finish(trace, tmp_path, monkeypatch, ahead_taken):
    """Writer._let_go: once the sums' threads have read the rows kept in memory, they are let go
    of before the sums are written and the cache sealed; the raw copy is removed (and the memory
    freed given back where the process trims, after the sort's likewise) by a thread of its own,
    which the conversion waits for."""
    from popview.cache import heap, rawtables, writer

    events, real_release, real_complete = [], rawtables.SortedCopy.release_kept, writer.Writer._complete

    def release_kept(self):
        assert any(c.parts for columns in self.kept.values() for c in columns.values())     # kept rows read
        real_release(self)
        events.append(("released", self.folder))

    def complete(self, *a, **k):
        events.append(("complete", None))
        return real_complete(self, *a, **k)

    monkeypatch.setattr(rawtables.SortedCopy, "release_kept", release_kept)
    monkeypatch.setattr(writer.Writer, "_complete", complete)
    monkeypatch.setattr(heap, "release_free_memory", lambda: events.append(("trim", threading.current_thread().name)))
    with popview.open(trace, cache_dir=tmp_path / "c"):
        pass
    assert ahead_taken == [1]
    assert [e[0] for e in events] in (["trim", "released", "trim", "complete"], ["trim", "released", "complete", "trim"])
    assert [e[1] for e in events if e[0] == "trim"] == ["popview-tidy", "popview-tidy"]
    assert not next(e[1] for e in events if e[0] == "released").exists()
    assert not [t.name for t in threading.enumerate() if t.name == "popview-tidy"]


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
@pytest.mark.parametrize("phase", ["writing call paths", "cumulative sums"])
def test_stopped_beside_the_call_paths_leaves_nothing(trace, tmp_path, ahead_taken, phase, how):
    _stopped_at(trace, tmp_path / "cache", phase, how, check=lambda: _taken(ahead_taken))


@pytest.mark.parametrize("weights, first", [([1] * 16, 8), ([1] * 2, 1), ([5, 1, 1, 1, 1, 1], 1), ([1, 1, 1, 5], 3),
                                            ([2, 1, 1], 1), ([1, 3, 1, 1], 2)])
def test_the_halves_cut_nearest_the_half(monkeypatch, weights, first):
    """16 equal processes split 8 and 8 (the first cumulative weight reaching the half split them
    7 and 9: the second thread worked 40 % longer on the 1 GB trace)."""
    b = object.__new__(cumulative._Builder)
    b.offsets = np.concatenate(([0], np.cumsum(np.array(weights) * 1000)))
    b.n_loc = len(weights)
    b.events = None
    monkeypatch.setattr(cumulative, "SPLIT_ROWS", 0)
    halves = b._halves([[[loc] for loc in range(len(weights))]])
    assert [len(h) for h in halves] == [first, len(weights) - first]


def _taken(seen) -> None:
    assert seen, "the path under test was not taken"
