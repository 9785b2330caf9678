"""A Cube profile alone in the Overview: it has no timeline, and the Timeline pane took 280 px
of the window's height to say so in its middle, above trees that scrolled. Now one line says
why and the trees and the Advisor get the room; a trace opened next gets the timeline back."""
from __future__ import annotations

import pytest

from popview.gui import layouts
from popview.gui.timeline.pane import NO_TIMELINE
from popview.testing.synthetic import Shape, write
from tests.gui import gallery

pytestmark = pytest.mark.gui

PROFILE = "popview-heat/scorep/hyb_2x2/profile.cubex"


def test_a_profile_alone_leaves_no_empty_timeline_pane(qtbot, tmp_path, cache_dir, shared_traces):
    profile = shared_traces / PROFILE
    if not profile.exists():
        pytest.skip(f"{profile} is not among the shared traces")
    window = gallery.open_window(qtbot, tmp_path, cache_dir, [profile], 1, (1500, 920))
    gallery.settle(qtbot, window)
    assert window.layout_name == layouts.OVERVIEW
    timeline, calls = window.docks["Timeline"], window.docks["Call tree"]
    pane = window.panes["Timeline"]
    qtbot.waitUntil(lambda: timeline.height() < 60, timeout=3000)
    assert pane.message.isVisible() and pane.message.text() == NO_TIMELINE
    assert pane.message.height() >= pane.message.fontMetrics().height()      # the line whole, not cut
    assert not pane.mode_box.isVisible() and not pane.fit_button.isVisible()
    assert calls.height() > 0.3 * window.height()
    window.reset_layout()                         # the Overview asked again: still one line
    qtbot.wait(300)
    assert timeline.height() < 60
    window.apply_layout(layouts.ADVISOR)          # tabbed behind the Advisor: it limits nothing
    qtbot.wait(300)
    assert not pane.compact and window.docks["Advisor"].height() > 0.4 * window.height()
    window.apply_layout(layouts.OVERVIEW)
    qtbot.wait(300)
    assert pane.compact

    trace = tmp_path / "run.prv"
    write(trace, Shape(processes=2, threads=1, iterations=2))
    window.open_paths([str(trace)])
    qtbot.waitUntil(lambda: len(window.state.experiments) == 2 and not window.jobs, timeout=120_000)
    qtbot.waitUntil(lambda: timeline.height() > 0.2 * window.height(), timeout=5000)
    assert not pane.compact and pane.mode_box.isVisible()
