"""Progress reporting and cancellation for long work (no Qt: the GUI wraps it)."""
from __future__ import annotations

import threading
from typing import Callable, Optional

ProgressFn = Callable[[float, str], None]


class Cancelled(Exception):
    """Raised inside long work when the user asked it to stop."""


class Progress:
    """Maps sub-steps onto [0, 1] and checks a cancel flag at each report."""

    def __init__(self, callback: Optional[ProgressFn] = None, cancel: Optional[threading.Event] = None,
                 start: float = 0.0, end: float = 1.0):
        self.callback = callback
        self.cancel = cancel
        self.start, self.end = start, end

    def __call__(self, fraction: float, message: str = "") -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("cancelled by the user")
        if self.callback is not None:
            self.callback(self.start + (self.end - self.start) * min(max(fraction, 0.0), 1.0), message)

    def sub(self, start: float, end: float) -> "Progress":
        span = self.end - self.start
        return Progress(self.callback, self.cancel, self.start + span * start, self.start + span * end)

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("cancelled by the user")
