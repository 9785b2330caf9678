"""Cycles are collected in the GUI thread only while the window runs (a Qt object in a
cycle collected from a worker thread crashed the GUI thread's next timer event)."""
from __future__ import annotations

import gc
import threading

from popview.gui import collector


class _Cycle:
    def __init__(self, seen: list):
        self.me, self.seen = self, seen

    def __del__(self):
        self.seen.append(threading.current_thread())


def test_cycles_made_in_a_worker_are_collected_in_the_gui_thread(qtbot):
    installed = collector.install()
    assert collector.install() is installed                 # one per application
    assert not gc.isenabled()
    seen: list = []

    def make_garbage():
        for _ in range(20_000):               # far past every generation's threshold
            _Cycle(seen)

    worker = threading.Thread(target=make_garbage)
    worker.start()
    worker.join()
    assert seen == []                         # the worker never collected
    qtbot.waitUntil(lambda: len(seen) >= 20_000, timeout=10_000)
    assert set(seen) == {threading.main_thread()}


def test_uninstalled_the_collector_gives_python_its_automatic_collection_back(qtbot):
    collector.install()
    collector.uninstall()
    assert gc.isenabled()
    assert collector.install() is not None and not gc.isenabled()
