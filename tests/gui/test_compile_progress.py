"""The first run's compile count, as the Scaling table and the Advisor say it while they wait:
it counts what they wait for. 'N of about 67 done' counted the conversion's kernels as well
(reading, ordering, the timeline's overview), while the analysis alone needs about 20."""
from __future__ import annotations

import threading

import pytest

from popview import firstuse
from popview.gui.widgets import compiling
from popview.precompile import manifest

pytestmark = pytest.mark.gui


def relay_compiles(names) -> None:
    """As the helper process's compiles are relayed, from another thread."""
    def run():
        for name in names:
            for phase in ("start", "end"):
                firstuse.relay(name, phase)
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()


def test_the_count_is_of_the_kernels_the_analysis_needs(qtbot):
    window = manifest()["window"]
    progress = compiling.CompileProgress()
    try:
        assert 10 <= progress.expected <= 30 < len(window), (progress.expected, len(window))
        conversion = [f"{m.removeprefix('popview.')}.{f}" for m, f, *_ in window
                      if m.startswith(("popview.readers.", "popview.cache.order", "popview.cache.pyramid"))]
        analysis = compiling.needed_kernels()
        assert conversion and len(analysis) == progress.expected
        relay_compiles(conversion[:12] + analysis[:3])
        qtbot.waitUntil(lambda: progress.compiling and progress.done == 3, timeout=5000)
        text = progress.text()
        assert text.endswith(f": 3 of about {progress.expected} done"), text
        relay_compiles(conversion[12:20])           # the conversion goes on: the count stays
        qtbot.wait(50)
        assert progress.text().endswith(f": 3 of about {progress.expected} done")
    finally:
        progress.deleteLater()


def test_a_compile_of_any_kernel_under_way_keeps_the_note(qtbot):
    progress = compiling.CompileProgress()
    try:
        firstuse.relay("cache.pyramid.scatter_tiles", "start")
        qtbot.waitUntil(lambda: progress.compiling, timeout=5000)
        progress._quieted()                          # quiet, yet a compile is under way
        assert progress.compiling and "0 of about" in progress.text()
        firstuse.relay("cache.pyramid.scatter_tiles", "end")
        qtbot.waitUntil(lambda: progress._all[0] == progress._all[1], timeout=5000)
        progress._quieted()
        assert not progress.compiling and progress.text() == ""
    finally:
        progress.deleteLater()
