"""File > Export report from the window: the open runs at the current focus,
every bookmark with its note and a picture of its view, the view put back."""
from __future__ import annotations

import base64
import re

import pytest

import popview
from popview.analysis.focus import Focus
from popview.gui.advisor import AdvisorPane
from popview.gui.session_binding import binding_for
from popview.gui.state import AppState
from popview.testing.synthetic import Shape, write

pytestmark = pytest.mark.gui


def test_export_report_with_bookmark_pictures(qtbot, tmp_path, cache_dir):
    write(tmp_path / "h.prv", Shape(processes=2, threads=2, iterations=2, rank_weights=(1, 2)))
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    pane.resize(900, 600)
    pane.show()
    binding = binding_for(state)
    with popview.open(tmp_path / "h.prv", cache_dir=cache_dir) as exp:
        state.add_experiment(exp)
        state.set_focus(Focus.on_callpath("main/timestep"))
        binding.add_bookmark("the loop", "rank 1 has twice the work")
        state.set_focus(Focus.whole())
        binding.mark_dirty(False)
        assert [a.text() for a in pane.menu_actions()["File"]] == ["Export &report..."]
        target = tmp_path / "out.html"
        with qtbot.waitSignal(pane.reportWritten, timeout=30000) as sig:
            pane.export_report(target)
        assert sig.args == [str(target), ""]
    text = target.read_text()
    assert "the loop" in text and "rank 1 has twice the work" in text and "focus: main/timestep" in text
    png = re.search(r'src="data:image/png;base64,([^"]+)"', text)
    assert png and base64.b64decode(png.group(1))[:4] == b"\x89PNG"
    assert "<b>whole</b>" in text                                   # the report's focus: the current one
    assert state.focus == Focus.whole() and not binding.dirty       # the view is back, nothing changed
    assert "Hybrid additive" in text and "Computation / I/O" in text
