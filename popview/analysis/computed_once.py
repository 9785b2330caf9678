"""A bounded cache whose entries are computed once, however many threads ask.

The window asks for the same replay from two places at once (the timeline's
critical path and the Advisor): a cache that only locks its lookups lets
both miss and compute it twice. Here the first caller of a key computes it;
callers of the same key meanwhile wait for that result (or its exception).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Callable, Hashable


class ComputedOnce:
    """get(key, compute) -> compute()'s result, computed once per key while cached."""

    def __init__(self, size: int):
        self.size = size
        self._done: OrderedDict = OrderedDict()
        self._running: dict[Hashable, Future] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], object]):
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            running = self._running.get(key)
            if running is None:
                running = self._running[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:
            return running.result()
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                del self._running[key]
            running.set_exception(exc)
            raise
        with self._lock:
            del self._running[key]
            self._done[key] = value
            while len(self._done) > self.size:
                self._done.popitem(last=False)
        running.set_result(value)
        return value

    def clear(self) -> None:
        """Forget what is computed (computations under way still finish for their callers)."""
        with self._lock:
            self._done.clear()
