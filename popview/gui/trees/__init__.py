"""Cube-style coupled trees: metric | call path | system, left to right."""
from popview.gui.trees.calltree import CallTreePane
from popview.gui.trees.metrictree import MetricTreePane
from popview.gui.trees.systemtree import SystemTreePane

__all__ = ["CallTreePane", "MetricTreePane", "SystemTreePane"]
