"""The first run on a new machine: numba compiles popview's kernels once and
keeps them in the user cache directory. Each compile is announced, so that the
wait says what it is ("preparing popview for first use, once") instead of
sitting silently at 0 %.

numba reports a compile only on a cache miss: once the kernels are cached,
nothing is announced.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time

LABEL = "preparing popview for first use, once"
# Set by the command line: child processes (the cache's side builder) announce on the terminal too.
ENV_TERMINAL = "POPVIEW_ANNOUNCE_COMPILES"

_registered: list = []      # numba's listeners registered
_watching: list = []        # the watches started (registered now or once numba loads)
_relays: list = []          # the watches' own counters, for relay()
_lock = threading.Lock()


def watch_compiles(callback):
    """callback(kernel, done, started) at each start and end of a kernel's compile, in the
    compiling thread (or the thread relaying another process's compiles: relay()): `kernel`
    a short name, `done` / `started` the counts so far. Returns a function that stops the watch."""
    counts = {"start": 0, "end": 0}

    def on(kernel: str, phase: str) -> None:
        with _lock:                           # this process's compiles and a relay thread's: one at a time
            counts[phase] += 1
            callback(kernel, counts["end"], counts["start"])

    stop = watch_phases(on)
    _relays.append(on)

    def stop_all() -> None:
        stop()
        if on in _relays:
            _relays.remove(on)
    return stop_all


def watch_phases(on):
    """on(kernel, phase) at the "start" and the "end" of each compile of popview's kernels
    in this process. Returns a function that stops the watch. numba's listener is
    registered once numba loads (popview.jit.when_active): a run whose kernels all run
    interpreted never imports numba for it."""
    from popview import jit

    state = {"listener": None, "stopped": False}

    def register() -> None:
        from numba.core import event

        class _Listener(event.Listener):          # numba's own helpers compile too: only popview's are named
            def on_start(self, ev):
                if _ours(ev):
                    on(_name(ev), "start")

            def on_end(self, ev):
                if _ours(ev):
                    on(_name(ev), "end")

        with _lock:
            if state["stopped"]:
                return
            listener = state["listener"] = _Listener()
            event.register("numba:compile", listener)
            _registered.append(listener)

    _watching.append(state)
    jit.when_active(register)

    def stop() -> None:
        with _lock:
            state["stopped"] = True
            listener = state["listener"]
            if state in _watching:
                _watching.remove(state)
        if listener in _registered:
            from numba.core import event

            _registered.remove(listener)
            event.unregister("numba:compile", listener)
    return stop


def relay(kernel: str, phase: str) -> None:
    """A compile in another process popview started ("start" or "end" of `kernel`), told
    to every watch of this one: the window and the terminal count it as their own."""
    for on in list(_relays):
        on(kernel, phase)


def _ours(ev) -> bool:
    return ev.data["dispatcher"].py_func.__module__.startswith("popview.")


def _name(ev) -> str:
    func = ev.data["dispatcher"].py_func
    return f"{func.__module__.removeprefix('popview.')}.{func.__name__}"


class TerminalLine:
    """The announcement on stderr: one line rewritten in place on a terminal, a line
    every few seconds otherwise (logs, CI)."""

    def __init__(self, stream=None, every_s: float = 5.0):
        self._stream = stream
        self.tty = self.stream.isatty()
        self.every_s = every_s
        self._last = 0.0
        self._said = False
        self._t0 = None
        self._done = 0

    @property
    def stream(self):
        return self._stream or sys.stderr      # the current one (tests swap it)

    def __call__(self, kernel: str, done: int, started: int) -> None:
        now = time.monotonic()
        if self._t0 is None:
            self._t0 = now
            atexit.register(self.close)
        self._done = done
        text = f"popview: {LABEL}: compiling its kernels ({done} done, now {kernel})"
        if self.tty:
            self.stream.write(f"\r{text[:110]:110s}\r")
        elif not self._said or now - self._last >= self.every_s:
            self.stream.write(text + "\n")
            self._said, self._last = True, now
        self.stream.flush()

    def close(self) -> None:
        """The last word: how long it took, and that it will not happen again."""
        if self._t0 is not None and self._done:
            try:
                self.stream.write(f"{'' if not self.tty else chr(13)}popview: {LABEL}: {self._done} kernels "
                                  f"compiled in {time.monotonic() - self._t0:.0f} s, kept for later runs\n")
                self.stream.flush()
            except (ValueError, OSError):      # the stream is closed already: nothing to say it on
                pass
            self._t0 = None


def announce_on_terminal(children_too: bool = True):
    """Announce compiles on stderr (the command line); `children_too`: in the
    processes popview starts as well (they inherit the environment). Returns a
    function that ends the announcements (and says how long they took)."""
    if _watching:
        return lambda: None
    set_env = children_too and ENV_TERMINAL not in os.environ
    if set_env:
        os.environ[ENV_TERMINAL] = "1"
    line = TerminalLine()
    stop_watch = watch_compiles(line)

    def stop() -> None:
        stop_watch()
        line.close()
        if set_env:
            os.environ.pop(ENV_TERMINAL, None)
    return stop
