"""The next table's first location group read by a thread while this table is written
(writer._first_group_ahead): the events' first group was read by the main thread after the
states. The cache is the one read in turn; a failure of that read, or a stop while the
states are written, leaves no thread and nothing in the cache folder."""
from __future__ import annotations

import errno
import threading

import pytest

import popview
from popview.cache import writer
from popview.cache.progress import Cancelled
from popview.testing import synthetic
from tests.cachecompare import assert_same_cache
from tests.test_conversion_thread_faults import _fails, _lasting, _nothing_left


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("first-ahead")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=4, threads=2, iterations=30, work_ns=1_000_000))
    return d / "t.prv"


@pytest.fixture
def gathered(monkeypatch):
    """(table, first location, thread) of every group gathered."""
    seen = []
    real = writer._Staging.gather

    def gather(self, runs, a, b):
        seen.append((self.table, a, threading.current_thread().name))
        return real(self, runs, a, b)

    monkeypatch.setattr(writer._Staging, "gather", gather)
    return seen


def test_the_events_first_group_is_read_while_the_states_are_written(trace, tmp_path, monkeypatch, gathered):
    with popview.open(trace, cache_dir=tmp_path / "ahead") as exp:
        ahead = exp.cache_path
    first_events = [name for table, a, name in gathered if table == "events" and a == 0]
    assert first_events and first_events[0].startswith("popview-read"), gathered
    monkeypatch.setattr(writer, "_first_group_ahead", lambda *a: None)
    with popview.open(trace, cache_dir=tmp_path / "in-turn") as exp:
        in_turn = exp.cache_path
    assert_same_cache(ahead, in_turn)


def test_not_past_the_read_ahead_budget(trace, tmp_path, monkeypatch, gathered):
    monkeypatch.setattr(writer, "READ_AHEAD", 0)
    with popview.open(trace, cache_dir=tmp_path / "c"):
        pass
    first_events = [name for table, a, name in gathered if table == "events" and a == 0]
    assert first_events and not first_events[0].startswith("popview-read"), gathered


def test_a_failed_read_ahead_of_the_next_table_is_raised_and_leaves_nothing(trace, tmp_path, monkeypatch):
    real = writer._Staging.gather

    def gather(self, runs, a, b):
        if self.table == "events" and a == 0:
            raise OSError(errno.EIO, "disk read error in the next table's read")
        return real(self, runs, a, b)

    monkeypatch.setattr(writer._Staging, "gather", gather)
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert "disk read error in the next table's read" in str(exc)
    _nothing_left(before, tmp_path / "cache")


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
def test_stopped_while_the_states_are_written_leaves_nothing(trace, tmp_path, how):
    cancel = threading.Event()

    def progress(fraction, text):
        if text.startswith(("writing states", "sorting states")):
            if how == "cancel":
                cancel.set()
            else:
                raise KeyboardInterrupt("stopped")

    before = _lasting()
    exc = _fails(trace, tmp_path / "cache", progress=progress, cancel=cancel)
    assert isinstance(exc, Cancelled if how == "cancel" else KeyboardInterrupt), exc
    _nothing_left(before, tmp_path / "cache")
