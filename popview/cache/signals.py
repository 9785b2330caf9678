"""SIGTERM (what `timeout`, batch schedulers and `kill` send) stops a conversion
the way Ctrl-C does: the KeyboardInterrupt unwinds it, so its scratch folder
and its derived-data process go with it."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def sigterm_interrupts():
    """While converting in the main thread of a process that left SIGTERM at its default
    (an application's own handler is kept), SIGTERM raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
