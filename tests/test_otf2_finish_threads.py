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


@pytest.fixture
def warned(monkeypatch):
    """Both warnings the reader gives around the matching, in every conversion: one from the
    matching (a send left unmatched) and one after it (an event count that differs)."""
    from popview.readers.otf2 import conversion, events

    real_match, real_counts = conversion.match_messages, events.count_mismatches
    matched = []

    def match(sends, recvs):
        msgs, lost_sends, lost_recvs = real_match(sends, recvs)
        matched.append(threading.current_thread().name)
        return msgs, lost_sends + 1, lost_recvs

    monkeypatch.setattr(conversion, "match_messages", match)
    monkeypatch.setattr(events, "count_mismatches", lambda *a: list(real_counts(*a)) + ["a count differs"])
    return matched


def test_sums_begun_before_the_matching_give_the_same_cache(archive, tmp_path, monkeypatch, compiled, warned):
    """The cumulative sums begin on their thread before the messages are matched
    (Writer.begin_derived: the matching left the other core idle): the cache is the one built
    with the matching first, the flags and warnings in the same places."""
    begun = []
    real = writer.Writer.begin_derived

    def begin(self, progress):
        begun.append(self.count("messages"))
        return real(self, progress)

    monkeypatch.setattr(writer.Writer, "begin_derived", begin)
    with popview.open(archive, cache_dir=tmp_path / "early") as exp:
        early = exp.cache_path
        warnings = exp.definitions.warnings
        flags = list(exp.definitions.flags)
    assert begun == [0] and len(warned) == 1, "the sums were not begun before the matching"
    unmatched = [i for i, w in enumerate(warnings) if "without a matching partner" in w]
    assert unmatched and unmatched[0] < warnings.index("a count differs"), warnings
    assert flags.index("unmatched_sends") < flags.index("otf2_event_counts"), flags
    monkeypatch.setattr(writer, "DERIVED_READS", {"never"})      # not begun: the matching first, as before
    with popview.open(archive, cache_dir=tmp_path / "serial") as exp:
        serial = exp.cache_path
    assert len(warned) == 2
    assert differences(early, serial) == []


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
def test_stopped_while_matching_beside_the_sums_leaves_nothing(archive, tmp_path, monkeypatch, compiled, how):
    """A cancel or a Ctrl-C during the matching, the sums' thread already running: it is
    stopped and waited for, nothing left in the cache folder."""
    from popview.readers.otf2 import conversion

    cancel = threading.Event()
    alive = []

    def match(sends, recvs):
        alive.append(any(t.name.startswith("popview-derived") for t in threading.enumerate()))
        if how == "cancel":
            cancel.set()
            raise Cancelled("cancelled by the user")
        raise KeyboardInterrupt("stopped")

    monkeypatch.setattr(conversion, "match_messages", match)
    before = _lasting()
    exc = _fails(archive, tmp_path / "cache", cancel=cancel)
    assert isinstance(exc, Cancelled if how == "cancel" else KeyboardInterrupt), exc
    assert alive == [True], "the sums were not running during the matching"
    _nothing_left(before, tmp_path / "cache")
