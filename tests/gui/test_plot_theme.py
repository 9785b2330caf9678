"""Plots take the theme: a dark window gets dark timeline and scaling plots with light
labels; scaling legends sit below the plot, not over the curves."""
from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor

from popview.gui.scaling import ScalingPane
from popview.gui.state import AppState
from popview.gui.timeline.view import TimelineView
from popview.testing import synthetic


@pytest.fixture
def dark():
    before = pg.getConfigOption("background"), pg.getConfigOption("foreground")
    pg.setConfigOption("background", QColor("#1f1f1f"))
    pg.setConfigOption("foreground", QColor("#e6e6e6"))
    yield
    pg.setConfigOption("background", before[0])
    pg.setConfigOption("foreground", before[1])


def darkness(widget) -> float:
    image = widget.grab().toImage()
    corner = image.pixelColor(image.width() - 3, 3)
    return corner.lightnessF()


def test_scaling_plots_follow_a_dark_theme_with_their_legend_below(qtbot, dark):
    pane = ScalingPane(AppState())
    qtbot.addWidget(pane)
    pane.resize(900, 500)
    pane.show()
    qtbot.waitExposed(pane)
    for plot in (pane.speedup_plot, pane.efficiency_plot):
        assert darkness(plot) < 0.2
        legend = plot.plotItem.legend
        assert legend.parentItem() is not plot.plotItem.vb, "the legend is not drawn over the curves"
        assert legend.mapRectToScene(legend.boundingRect()).top() >= \
            plot.plotItem.vb.mapRectToScene(plot.plotItem.vb.boundingRect()).bottom() - 1


def test_timeline_follows_a_dark_theme(qtbot, dark, tmp_path):
    import popview
    path = synthetic.write(tmp_path / "t.prv", synthetic.Shape(processes=2, threads=1, iterations=2))
    exp = popview.open(tmp_path / "t.prv", cache_dir=tmp_path / "c")
    view = TimelineView(exp)
    qtbot.addWidget(view)
    view.resize(600, 200)
    view.show()
    qtbot.waitExposed(view)
    assert darkness(view) < 0.2
    view.shutdown()
    exp.close()
    assert path
