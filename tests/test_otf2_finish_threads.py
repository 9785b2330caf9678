"""An OTF2 conversion's finish: the cumulative sums built by a thread while the tables are
written (writer.Writer._tables_beside_derived). A cancel, an interrupt or a failure in
either leaves no thread and nothing in the cache folder, and the cache equals the one
built one step after the other."""
from __future__ import annotations

import threading

import pytest

import popview
from popview import jit
from popview.cache import derived, writer
from popview.cache.progress import Cancelled
from popview.testing.otf2_writer import write_openmp_trace
from tests.cachecompare import differences
from tests.test_conversion_thread_faults import _fails, _lasting, _nothing_left


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("otf2-finish")
    write_openmp_trace(d / "omp", ranks=2, threads=3, iterations=4)
    return d / "omp" / "traces.otf2"


@pytest.fixture
def compiled(monkeypatch):
    """The archive is small enough for the kernels as Python: compiled here, as big ones are."""
    from popview import readers

    monkeypatch.setattr(readers.otf2, "INTERPRETED_BYTES", 0)


def test_beside_is_taken_and_equals_one_after_the_other(archive, tmp_path, monkeypatch, compiled):
    taken = []
    real = writer.Writer._tables_beside_derived
    monkeypatch.setattr(writer.Writer, "_tables_beside_derived", lambda self, *a: taken.append(1) or real(self, *a))
    with popview.open(archive, cache_dir=tmp_path / "beside") as exp:
        beside = exp.cache_path
    assert taken, "the cumulative sums were not built beside the tables"
    monkeypatch.setattr(writer, "DERIVED_READS", {"never"})
    with popview.open(archive, cache_dir=tmp_path / "serial") as exp:
        serial = exp.cache_path
    assert differences(beside, serial) == []


def test_beside_gives_the_same_cache_byte_for_byte_every_time(archive, tmp_path, monkeypatch, compiled):
    """Two threads writing into one HDF5 file place its objects in the order they happen to
    come: the cache's bytes (its digest) changed from one conversion to the next, so
    `convert --force` of an unchanged archive never kept its companions (companion.keep_if_still_valid)."""
    from popview.cache import integrity

    taken = []
    real = writer.Writer._tables_beside_derived
    monkeypatch.setattr(writer.Writer, "_tables_beside_derived", lambda self, *a: taken.append(1) or real(self, *a))
    digests = set()
    for i in range(4):
        with popview.open(archive, cache_dir=tmp_path / f"c{i}") as exp:
            digests.add(integrity.stored_digest(exp.cache_path))
    assert len(taken) == 4
    assert len(digests) == 1, f"{len(digests)} different caches of one archive"


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
def test_stopped_while_the_tables_are_written_leaves_nothing(archive, tmp_path, compiled, how):
    cancel = threading.Event()

    def progress(fraction, text):
        if text.startswith("writing events") or text.startswith("sorting events"):
            if how == "cancel":
                cancel.set()
            else:
                raise KeyboardInterrupt("stopped")

    before = _lasting()
    exc = _fails(archive, tmp_path / "cache", progress=progress, cancel=cancel)
    assert isinstance(exc, Cancelled if how == "cancel" else KeyboardInterrupt), exc
    _nothing_left(before, tmp_path / "cache")


def test_a_failure_of_the_sums_thread_is_raised_with_its_message(archive, tmp_path, monkeypatch, compiled):
    def fails(*args, **kwargs):
        assert threading.current_thread().name.startswith("popview-derived")
        raise ValueError("sums failed")

    monkeypatch.setattr(derived, "build_all", fails)
    before = _lasting()
    exc = _fails(archive, tmp_path / "cache")
    assert "sums failed" in str(exc)
    _nothing_left(before, tmp_path / "cache")


def test_interpreted_kernels_build_the_sums_after_the_tables(archive, tmp_path, monkeypatch):
    """As Python (small archives) the two threads would take turns under the GIL."""
    from popview import experiment

    monkeypatch.setattr(experiment, "_compiled_ahead", lambda module: False)   # small: run as Python
    monkeypatch.setattr(writer.Writer, "_tables_beside_derived", lambda *a: pytest.fail("beside as Python"))
    seen = []
    real = writer.Writer._write_tables
    monkeypatch.setattr(writer.Writer, "_write_tables", lambda self, *a: seen.append(jit.is_interpreted()) or
                        real(self, *a))
    popview.open(archive, cache_dir=tmp_path / "c").close()
    assert seen == [True]
