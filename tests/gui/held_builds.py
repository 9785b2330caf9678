"""A companion's build (popview.cache.overview / window_sums) held in the middle, so that a
test sees its progress entry and presses Cancel while it runs."""
from __future__ import annotations

import threading

from popview.cache.progress import Cancelled


def hold_builds(monkeypatch, module, fraction: float, text: str):
    """Patch module.build: each build records whether it runs in the GUI (main) thread in
    `started`, reports `fraction`, then waits for `gate` (set it to let builds go on),
    checking for a cancel, which it records in `cancelled`. Returns (started, gate, cancelled)."""
    started, gate, cancelled = [], threading.Event(), []
    real = module.build

    def held(source, defs, path, progress):
        started.append(threading.current_thread() is threading.main_thread())
        progress(fraction, text)
        while not gate.wait(0.01):
            try:
                progress.check()
            except Cancelled:
                cancelled.append(True)
                raise
        real(source, defs, path, progress)

    monkeypatch.setattr(module, "build", held)
    return started, gate, cancelled
