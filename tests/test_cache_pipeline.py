"""The writer's threads: the staging's writes (SpillWrites), the sort's reads one group
ahead (_read_ahead) and its consumer in order (_InOrder): results in order, failures
raised where the caller sees them."""
from __future__ import annotations

import errno
import os
import threading

import numpy as np
import pytest

from popview.cache import writer
from popview.cache.writer import SpillWrites, _InOrder, _read_ahead


def test_spill_writes_land_at_their_offsets(tmp_path):
    path = tmp_path / "column"
    spill = SpillWrites()
    parts = [np.arange(k * 1000, (k + 1) * 1000, dtype=np.int64) for k in range(3 * SpillWrites.AHEAD)]
    with open(path, "w+b") as f:
        at = 0
        for part in parts:
            spill.write(f.fileno(), part, at)
            at += part.nbytes
        spill.drain()
    spill.close()
    assert np.array_equal(np.fromfile(path, np.int64), np.concatenate(parts))


def test_a_failed_spill_write_is_raised_by_drain(tmp_path, monkeypatch):
    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer, "_pwrite_all", full)
    spill = SpillWrites()
    with open(tmp_path / "column", "w+b") as f:
        spill.write(f.fileno(), np.zeros(10, np.int64), 0)
        with pytest.raises(OSError) as raised:
            spill.drain()
    spill.close()
    assert raised.value.errno == errno.ENOSPC


def test_read_ahead_keeps_the_order_and_reads_one_ahead_within_the_budget():
    started, lock = [], threading.Lock()

    def read(item):
        with lock:
            started.append(item)
        return item * 10

    seen = []
    for value in _read_ahead(read, list(range(6)), [1] * 6, budget=2):
        with lock:
            assert len(started) <= value // 10 + 2        # never more than one beyond the one handed out
        seen.append(value)
    assert seen == [0, 10, 20, 30, 40, 50]
    assert list(_read_ahead(read, [], [], budget=2)) == []

    started.clear()
    for value in _read_ahead(read, list(range(4)), [2, 1, 1, 2], budget=2):   # only item 2 read ahead
        with lock:
            if value in (0, 20):              # the next one is over the budget with this one: not read yet
                assert len(started) == value // 10 + 1
            else:
                assert len(started) <= value // 10 + 2


def test_in_order_consumer_sees_every_group_in_order_and_its_failure_is_raised():
    got = []
    with _InOrder(got.append) as consume:
        for k in range(5):
            consume(k)
    assert got == [0, 1, 2, 3, 4]

    def fails(data):
        raise ValueError(f"bad group {data}")

    with pytest.raises(ValueError, match="bad group"):
        with _InOrder(fails) as consume:
            consume(1)
    with _InOrder(None) as consume:          # no consumer: nothing runs
        consume(1)
