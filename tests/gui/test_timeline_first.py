"""The timeline-first layout on a real hybrid trace at laptop and desktop sizes: the legend
names each state whole, no drop-down list cuts its choice, the Advisor strip shows the key
metric rows."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from popview.gui import layouts
from tests.gui import gallery
from tests.gui.gallery import plots_as_before  # noqa: F401 - autouse fixture

TRACE = "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
SIZES = ((1280, 800), (1600, 1000))
KEY_ROWS = ("Global efficiency", "Parallel efficiency", "Process efficiency", "Thread efficiency",
            "Computation scalability")




def rows_in_sight(tree) -> list[str]:
    """The names of the rows wholly inside the tree's viewport."""
    names, index = [], tree.model().index(0, 0)
    while index.isValid():
        rect = tree.visualRect(index)
        if rect.top() >= 0 and rect.bottom() <= tree.viewport().height():
            names.append(str(index.data()))
        index = tree.indexBelow(index)
    return names


@pytest.mark.parametrize("size", SIZES)
def test_timeline_first_names_every_state_and_shows_the_key_advisor_rows(qtbot, tmp_path, cache_dir,
                                                                         shared_traces, size):
    path = shared_traces / TRACE
    if not path.exists():
        pytest.skip(f"{path} is not among the shared traces")
    window = gallery.open_window(qtbot, tmp_path, cache_dir, [path], 1, size)
    window.apply_layout(layouts.TIMELINE)
    qtbot.wait(800)
    window.resize(*size)
    gallery.settle(qtbot, window)
    qtbot.wait(300)               # the legend fills once the timeline's drawing settles
    QApplication.processEvents()
    legend = window.panes["Timeline"].legend
    texts = [legend.item(i).text() for i in range(legend.count())]
    assert any(t.startswith("Scheduling and Fork/Join") for t in texts), texts
    assert not gallery.cut_list_items(window)
    assert not gallery.cut_choices(window)
    advisor = window.panes["Advisor"]
    assert gallery.showing(advisor)
    tree = advisor.current_tab().tree
    shown = rows_in_sight(tree)
    assert set(KEY_ROWS) <= set(shown), f"{size}: the Advisor strip shows {shown}"
    assert tree.horizontalScrollBar().maximum() == 0 or not tree.horizontalScrollBar().isVisible(), \
        "the strip's columns fit its width"
    assert window.docks["Timeline"].height() > 0.5 * window.height()
