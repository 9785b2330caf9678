"""Time windows as the window names them: in the unit of their size, never '0.0025613 s'."""
from __future__ import annotations

import pytest

from popview.analysis.focus import Focus
from popview.gui.widgets.units import format_span, focus_text

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("t0, t1, text", [
    (2_561_300, 3_151_630, "2.561 ms - 3.152 ms"),          # the demo's "iteration 5" annotation
    (1_000_000_000, 1_500_000_000, "1 s - 1.5 s"),
    (12_340_100_000, 12_340_500_000, "12.3401 s - 12.3405 s"),   # a narrow window keeps its digits
    (7_020_000_000, 14_040_000_000, "7.02 s - 14.04 s"),
])
def test_a_span_in_the_unit_of_its_size(t0, t1, text):
    assert format_span(t0, t1) == text


def test_the_annotations_list_and_the_toolbar_read_a_ms_window_in_ms(qtbot, tmp_path):
    """On the demo (a 5.9 ms run) the Annotations list read '0.0025613 s - 0.00315163 s [4x2]:
    iteration 5' and a window focus 'Focus: 0.0025613 s - 0.00315163 s'."""
    from types import SimpleNamespace

    from PySide6.QtCore import QSettings

    from popview.gui.annotations import describe
    from popview.gui.mainwindow import MainWindow

    ann = SimpleNamespace(kind="time_range", t0=2_561_300, t1=3_151_630, location=None)
    assert describe(ann) == "2.561 ms - 3.152 ms"
    window = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        cache_dir=tmp_path / "cache", panes=[])
    qtbot.addWidget(window)
    window.state.set_focus(Focus.window(2_561_300, 3_151_630))
    assert window.focus_label.text().strip() == "Focus: 2.561 ms - 3.152 ms"
    assert focus_text(Focus.whole()) == "whole"
