"""Threads whose start Ctrl-C cannot cut in two.

Starting a thread takes about 100 us in which the starting thread waits for the new one
(`Thread.start`); a KeyboardInterrupt raised there (Ctrl-C, or SIGTERM, which the commands
unwind the same way, delivered to the main thread) left a thread running that its owner
did not know of: a ThreadPoolExecutor registers its worker only after `start` returns, so
its shutdown did not wait for it, and a `start()` written before the `try` whose
`finally` stops and joins the thread left it unjoined. Here the signals' Python handlers
are held while a thread starts and called once it is started and registered, so that the
interrupt then unwinds through code that waits for it. Only the main thread gets Python's
signal handlers: a thread started elsewhere (the window's lanes) cannot be interrupted so.
"""
from __future__ import annotations

import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

_HELD = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if s is not None)


@contextmanager
def interrupts_held():
    """Within, in the main thread, SIGINT and SIGTERM (when Python handles them) are held;
    at the end the handler of the first one held runs (Ctrl-C: KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list = []
    handlers = {}
    for sig in _HELD:
        handler = signal.getsignal(sig)
        if callable(handler):
            handlers[sig] = handler
            signal.signal(sig, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if held:
            signum, frame = held[0]
            handlers[signum](signum, frame)


def start(thread: threading.Thread) -> None:
    """thread.start(), whole: a Ctrl-C during it is raised once the thread runs (call it
    inside the `try` whose `finally` stops and joins the thread)."""
    with interrupts_held():
        thread.start()


class Pool(ThreadPoolExecutor):
    """A ThreadPoolExecutor whose workers are started and registered as one step: a Ctrl-C
    while one starts is raised once the pool knows it, so that its shutdown waits for it."""

    def _adjust_thread_count(self):
        if len(self._threads) >= self._max_workers:      # no thread to start: what every submit but the
            super()._adjust_thread_count()              # first few meets (holding the signals cost 20-40 us)
            return
        with interrupts_held():
            super()._adjust_thread_count()
