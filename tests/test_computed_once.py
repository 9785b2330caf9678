"""Results computed once however many threads ask (the timeline and the Advisor ask for
the same replay at once)."""
from __future__ import annotations

import threading
import time

import pytest

from popview.analysis.computed_once import ComputedOnce


def test_threads_asking_for_one_key_at_once_share_one_computation():
    cache, calls, start = ComputedOnce(4), [], threading.Barrier(6)

    def compute():
        calls.append(1)
        time.sleep(0.2)            # long enough for every thread to ask meanwhile
        return object()

    got = []

    def ask():
        start.wait()
        got.append(cache.get("replay", compute))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len({id(v) for v in got}) == 1 and len(got) == 6


def test_a_failed_computation_reaches_its_waiters_and_is_not_kept():
    cache = ComputedOnce(4)

    def fail():
        raise ValueError("no records")

    with pytest.raises(ValueError, match="no records"):
        cache.get("k", fail)
    assert cache.get("k", lambda: 7) == 7


def test_the_oldest_entries_go_beyond_the_size():
    cache, calls = ComputedOnce(2), []
    for key in ("a", "b", "a", "c", "a", "b"):
        cache.get(key, lambda key=key: calls.append(key) or key)
    assert calls == ["a", "b", "c", "b"]      # "a" kept (recently used), "b" dropped by "c"
